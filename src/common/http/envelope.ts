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
  error: { msg: string; details?: FieldErrorDetail[] };
}

export const failure = (code: number, msg: string, details?: FieldErrorDetail[]): FailureEnvelope => ({
  status: 'failed',
  code,
  msg,
  data: null,
  error: details ? { msg, details } : { msg },
});
