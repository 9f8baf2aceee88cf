/** The response envelope of the spec (README.md, "Envelope"). */
export interface SuccessEnvelope<T = unknown> {
  status: 'success';
  code: number;
  msg: string;
  data: T;
}

export interface FieldErrorDetail {
  field: string;
  messages: string[];
}

export interface FailureEnvelope {
  status: 'failed';
  code: number;
  msg: string;
  data: null;
  /** `omittedDetails`: how many field errors there were beyond the ones `details` lists. */
  error: { msg: string; details?: FieldErrorDetail[]; omittedDetails?: number };
}

export const failure = (
  code: number,
  msg: string,
  details?: FieldErrorDetail[],
  omittedDetails = 0,
): FailureEnvelope => ({
  status: 'failed',
  code,
  msg,
  data: null,
  error: details ? (omittedDetails > 0 ? { msg, details, omittedDetails } : { msg, details }) : { msg },
});
