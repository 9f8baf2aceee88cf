// The parts of mailauth 4.13.3 (pinned in package.json) that its own DkimSigner is made of;
// mailauth ships no types for them.

declare module 'mailauth/lib/dkim/body' {
  export interface DkimBodyHasher {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  }
  export function dkimBody(canonicalization: string, hashAlgo: string, maxBodyLength: false): DkimBodyHasher;
}

declare module 'mailauth/lib/dkim/header' {
  import type { SigningHeaderLines } from 'mailauth/lib/tools';
  export function generateCanonicalizedHeader(
    type: 'DKIM',
    signingHeaderLines: SigningHeaderLines,
    options: {
      signingDomain: string;
      selector: string;
      algorithm: string;
      canonicalization: string;
      bodyHash: string;
      signTime: Date;
    },
  ): { canonicalizedHeader: Buffer; dkimHeaderOpts: Record<string, string | number> };
}

declare module 'mailauth/lib/tools' {
  export interface ParsedHeaders {
    parsed: Array<{ key: string; casedKey: string; line: Buffer }>;
    original: Buffer;
  }
  export interface SigningHeaderLines {
    keys: string;
    headers: ParsedHeaders['parsed'];
  }
  export function parseHeaders(buf: Buffer): ParsedHeaders;
  /** `fieldNames` must be a colon-separated string: anything else means mailauth's defaults. */
  export function getSigningHeaderLines(
    parsed: ParsedHeaders['parsed'],
    fieldNames: string,
  ): SigningHeaderLines;
  export function formatSignatureHeaderLine(
    type: 'DKIM',
    values: Record<string, string | number>,
    folded: boolean,
  ): string;
}
