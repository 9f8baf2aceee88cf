import { ParseUUIDPipe } from '@nestjs/common';

/** `@Param('uuid', uuidPipe)`: any UUID version; a malformed one is a 400 with the envelope. */
export const uuidPipe = new ParseUUIDPipe({ version: undefined, errorHttpStatusCode: 400 });
