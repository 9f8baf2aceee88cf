import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A sender domain as stored: trimmed, lower-case, IDN as punycode, no trailing dot. Returns the
 * problem instead when it is not a hostname of at least two labels (resources.md "Domain").
 */
export function normaliseDomainName(input: string): { name: string } | { problem: string } {
  const raw = input.trim().replace(/\.$/, '');
  if (!raw) return { problem: 'name must not be empty' };
  if (/[/:@?#\\\s]/.test(raw)) {
    return { problem: 'name must be a domain name only: no scheme, port, path, address or spaces' };
  }
  if (isIP(raw)) return { problem: 'name must be a domain name, not an IP address' };
  const name = domainToASCII(raw.toLowerCase());
  if (!name) return { problem: 'name is not a valid domain name' };
  if (name.length > 253) return { problem: 'name must be at most 253 characters long' };
  const labels = name.split('.');
  if (labels.length < 2) return { problem: 'name must have at least two labels, e.g. acme.co.id' };
  if (!labels.every((label) => LABEL.test(label))) {
    return {
      problem: 'name has an invalid label: letters, digits and inner hyphens, 1 to 63 characters each',
    };
  }
  if (!labels.every(isALabelOrPlain)) return { problem: 'name is not a valid domain name' };
  if (/^\d+$/.test(labels[labels.length - 1]))
    return { problem: 'name must end in a top-level domain, not a number' };
  return { name };
}

/**
 * A label that is not punycode, or punycode that decodes and encodes back to itself. Node's URL
 * parser refused a broken A-label (`xn--zz`) up to Node 20 and keeps it as it is from Node 26
 * on, so the check is ours: the same name is valid on every supported line.
 */
function isALabelOrPlain(label: string): boolean {
  if (!label.startsWith('xn--')) return true;
  const unicode = domainToUnicode(label);
  return unicode !== label && domainToASCII(unicode) === label;
}
