import { HttpStatus } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { BadRequestError, DomainError } from '../../common/errors/domain-error';

/** README "Bodies": uploads are at most 2 MB (2 MiB), kept in memory. */
export const MAX_PROOF_BYTES = 2 * 1024 * 1024;

/** The limits @fastify/multipart enforces while it streams (configureApp registers it with these). */
export const MULTIPART_LIMITS = {
  fileSize: MAX_PROOF_BYTES,
  files: 1,
  fields: 10,
  fieldSize: 1024,
  parts: 20,
  headerPairs: 100,
};

export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.PAYLOAD_TOO_LARGE, message);
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(message: string) {
    super(HttpStatus.UNSUPPORTED_MEDIA_TYPE, message);
  }
}

export interface ProofUpload {
  content: Buffer;
  /** Detected from the first bytes, never taken from the request. */
  type: string;
  name: string;
  size: number;
}

interface Signature {
  type: string;
  ext: string;
  matches(b: Buffer): boolean;
}

const ascii = (b: Buffer, start: number, end: number) => b.subarray(start, end).toString('latin1');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** quality.md: image (PNG, JPEG, GIF, WebP) or PDF, recognised by content. */
const SIGNATURES: Signature[] = [
  { type: 'image/png', ext: 'png', matches: (b) => b.subarray(0, 8).equals(PNG) },
  { type: 'image/jpeg', ext: 'jpg', matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  {
    type: 'image/gif',
    ext: 'gif',
    matches: (b) => ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a',
  },
  {
    type: 'image/webp',
    ext: 'webp',
    matches: (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP',
  },
  { type: 'application/pdf', ext: 'pdf', matches: (b) => ascii(b, 0, 5) === '%PDF-' },
];

export function detectProofType(content: Buffer): Signature | undefined {
  return SIGNATURES.find((s) => s.matches(content));
}

/**
 * The name as stored and served back in `Content-Disposition`: the last path segment, accents
 * dropped, ASCII letters, digits, `_` and `-` only (runs of anything else become `_`), no
 * leading `_`/`-`, then one extension: `ext`, the one of the type detected from the content.
 * Whatever extension the upload claimed is dropped and its other dots become `_`, so a PNG
 * named `x<script>.html` is stored as `x_script_.png`. At most 100 characters; `proof.<ext>`
 * when nothing is left.
 */
export function sanitizeFileName(raw: string | undefined, ext: string): string {
  const base = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  const stem = (dot > 0 ? base.slice(0, dot) : base)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[_-]+/, '');
  if (!/[A-Za-z0-9]/.test(stem)) return `proof.${ext}`;
  return `${stem.slice(0, 100 - ext.length - 1)}.${ext}`;
}

/** Room for the multipart framing, part headers and the few small fields allowed beside the file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

const TOO_LARGE = `The file is larger than 2 MB (${MAX_PROOF_BYTES.toLocaleString('en-US')} bytes)`;

/** Errors of the multipart parser: limits keep their 413, a malformed body is a 400. */
function uploadError(e: unknown): Error {
  const code = (e as { code?: unknown })?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new PayloadTooLargeError(TOO_LARGE);
  if (code === 'FST_FILES_LIMIT') return new BadRequestError('Send exactly one file, in field "file"');
  const status = (e as { statusCode?: unknown })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && e instanceof Error) return e;
  return new BadRequestError('Malformed multipart body');
}

/**
 * Reads the proof from a multipart request (field `file`) into memory. The size limit is
 * enforced by the parser while it streams: nothing beyond 2 MiB is ever buffered, and the
 * upload then fails with 413. The type comes from the content (415 for anything else).
 */
export async function readProofUpload(request: FastifyRequest): Promise<ProofUpload> {
  if (!request.isMultipart()) {
    throw new UnsupportedMediaTypeError(
      'Send the proof as multipart/form-data, with the file in field "file"',
    );
  }
  // A declared length far beyond the limit is refused before anything is read.
  if (Number(request.headers['content-length'] ?? 0) > MAX_PROOF_BYTES + MULTIPART_OVERHEAD_BYTES) {
    throw new PayloadTooLargeError(TOO_LARGE);
  }
  let part: MultipartFile | undefined;
  let content: Buffer;
  try {
    part = await request.file({ limits: MULTIPART_LIMITS });
    if (!part) throw new BadRequestError('file is required (multipart field "file")');
    if (part.fieldname !== 'file') {
      part.file.resume();
      throw new BadRequestError('The file must be sent in multipart field "file"');
    }
    content = await part.toBuffer();
  } catch (e) {
    if (e instanceof DomainError) throw e;
    throw uploadError(e);
  }
  if (part.file.truncated) throw new PayloadTooLargeError(TOO_LARGE);
  if (content.length === 0) throw new BadRequestError('file is empty');
  const signature = detectProofType(content);
  if (!signature) {
    throw new UnsupportedMediaTypeError('The proof must be an image (PNG, JPEG, GIF, WebP) or a PDF');
  }
  return {
    content,
    type: signature.type,
    name: sanitizeFileName(part.filename, signature.ext),
    size: content.length,
  };
}
