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

const invalid = (field: string) => badRequest(`${field} is not valid base64`);

/** Decode `s`; 400 `invalid_request` naming `field` when it is not valid base64. */
export function decodeBase64Strict(s: string, field: string): Buffer {
  const expected = base64DecodedLength(s);
  if (expected < 0) throw invalid(field);
  const out = Buffer.from(s, 'base64');
  // Node also accepts the URL-safe alphabet; the contract asks for standard base64 (indexOf is native).
  if (out.length !== expected || s.indexOf('-') >= 0 || s.indexOf('_') >= 0) throw invalid(field);
  return out;
}

/** Characters decoded between two turns of the event loop (a multiple of 4: whole groups). */
const STEP_CHARS = 4 << 20;

/**
 * decodeBase64Strict for a string of any length: one of more than STEP_CHARS characters (a payload's
 * data_b64) is decoded a step at a time (about 10 ms each), yielding to the event loop in between,
 * where one call held it for 100-200 ms per 64 MiB decoded. Each character is still looked at by
 * native code only: a step with a character outside the alphabet decodes short, so the total does.
 */
export async function decodeBase64(s: string, field: string): Promise<Buffer> {
  if (s.length <= STEP_CHARS) return decodeBase64Strict(s, field);
  const expected = base64DecodedLength(s);
  if (expected < 0) throw invalid(field);
  const out = Buffer.allocUnsafeSlow(expected);
  let written = 0;
  for (let at = 0; at < s.length; at += STEP_CHARS) {
    const step = s.slice(at, at + STEP_CHARS);
    if (step.indexOf('-') >= 0 || step.indexOf('_') >= 0) throw invalid(field);
    written += out.write(step, written, 'base64');
    await new Promise((r) => setImmediate(r));
  }
  if (written !== expected) throw invalid(field);
  return out;
}
