// Strict standard base64 (RFC 4648, padding optional) without a JavaScript pass over the characters:
// Node's decoder (native) skips characters outside the alphabet, so a string is valid exactly when
// its decoded length equals the length its character count implies.
import { badRequest } from '../errors.js';

/** Decoded length implied by a base64 string of this many characters, or -1 when no string could have it. */
export function base64DecodedLength(s: string): number {
  let len = s.length;
  let pad = 0;
  while (pad < 2 && len > 0 && s.charCodeAt(len - 1) === 61 /* = */) {
    len--;
    pad++;
  }
  if (pad > 0 && s.length % 4 !== 0) return -1;
  if (len % 4 === 1) return -1;
  return Math.floor((len * 3) / 4);
}

/** Decode `s`; 400 `invalid_request` naming `field` when it is not valid base64. */
export function decodeBase64Strict(s: string, field: string): Buffer {
  const expected = base64DecodedLength(s);
  if (expected < 0) throw badRequest(`${field} is not valid base64`);
  const out = Buffer.from(s, 'base64');
  // Node also accepts the URL-safe alphabet; the contract asks for standard base64 (indexOf is native).
  if (out.length !== expected || s.indexOf('-') >= 0 || s.indexOf('_') >= 0) throw badRequest(`${field} is not valid base64`);
  return out;
}
