// A put's payload (CONTRACT.md section 2): an .npy array, or any other bytes as a 1-D uint8 blob.
import type { DType } from '../engine/types.js';
import { payloadTooLarge } from '../http/errors.js';
import { NPY_MAX_HEADER_BYTES } from '../limits/input.js';
import type { Base64Data } from './base64.js';
import type { GatheredValues } from './npy-gather.js';
import { decodeNpy, isNpy } from './npy.js';

export interface Payload {
  kind: 'array' | 'blob';
  dtype: DType;
  shape: number[];
  /** C-order little-endian element bytes; a blob's bytes as given. */
  data: Buffer;
  /**
   * The elements already converted to float64, in C order, and the sum of their squares (an upload
   * converted while it arrived, codec/npy-gather.ts); the engine may take the values as its
   * workspace and overwrite them.
   */
  gathered?: GatheredValues;
}

/**
 * The bytes of a JSON form's `data_b64` (put, topk_vector): 413 when its length implies more than the
 * largest payload with its .npy header (judged before its validity, as a string's length would be),
 * 400 when it is not valid base64.
 */
export function payloadBytes(data: Base64Data, maxPayloadBytes: number): Buffer {
  if (data.impliedLength > maxPayloadBytes + NPY_MAX_HEADER_BYTES) {
    throw payloadTooLarge(`decoded payload of ${data.impliedLength} bytes exceeds the limit of ${maxPayloadBytes} bytes`);
  }
  return data.bytes('data_b64');
}

/**
 * Classify and decode `bytes` (ownership passes to the payload: conversions happen in place).
 * `maxElements`: an .npy shape's bound (SVC_GATE_MAX_PAYLOAD_BYTES). `forceBlob`: the binary form's
 * application/octet-stream, a blob even when the bytes look like .npy.
 */
export async function decodePayload(bytes: Buffer, maxElements: number, forceBlob = false): Promise<Payload> {
  if (!forceBlob && isNpy(bytes)) {
    const a = await decodeNpy(bytes, maxElements);
    return { kind: 'array', dtype: a.dtype, shape: a.shape, data: a.data };
  }
  return { kind: 'blob', dtype: 'uint8', shape: [bytes.length], data: bytes };
}
