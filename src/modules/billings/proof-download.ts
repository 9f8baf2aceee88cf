import { ApiOkResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { StoredProof } from './billings.service';

/** OpenAPI for the proof download: the raw file, not an envelope. */
const PROOF_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf'];

/**
 * OpenAPI for the proof download: the raw file, not an envelope. The content types are set on
 * the 200 response only (`@ApiProduces` would also move the error envelopes off JSON).
 */
export const ApiProofDownload = () =>
  ApiOkResponse({
    description:
      'The uploaded file with its stored content type and `Content-Disposition: attachment; filename="…"` (raw bytes, no envelope)',
    content: Object.fromEntries(
      PROOF_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
    ),
  });

/** Sends the stored proof as an attachment, with the type detected at upload. */
export async function sendProof(reply: FastifyReply, proof: StoredProof): Promise<void> {
  await reply
    .status(200)
    .header('content-type', proof.type)
    .header('content-length', proof.content.length)
    .header('content-disposition', `attachment; filename="${proof.name}"`)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'private, no-store')
    .send(proof.content);
}
