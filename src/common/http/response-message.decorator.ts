import { SetMetadata } from '@nestjs/common';

export const RESPONSE_MESSAGE = 'response:message';
export const RAW_RESPONSE = 'response:raw';

/** The envelope's `msg` for a successful response of this handler. */
export const ResponseMessage = (msg: string) => SetMetadata(RESPONSE_MESSAGE, msg);

/** The handler writes its own body (text, CSV, a file): the envelope interceptor leaves it alone. */
export const RawResponse = () => SetMetadata(RAW_RESPONSE, true);
