// Shared pieces of the query tests: arrays to store, a client for the query routes, and dense
// reference metrics computed in float64 on what serve returns (the reconstructed arrays).
import { expect } from 'chai';
import { ITEM_SIZE, type DType } from '../../src/engine/types.js';
import type { Reply } from '../helpers/server.js';
import { b64, npyOf, rng, type Client } from '../storage/helpers.js';

export type Metric = 'cosine' | 'euclidean' | 'dot';
export const METRICS: Metric[] = ['cosine', 'euclidean', 'dot'];

const ARRAYS = {
  float64: Float64Array,
  float32: Float32Array,
  int32: Int32Array,
  int16: Int16Array,
  uint8: Uint8Array,
} as const;
export type QueryDType = keyof typeof ARRAYS;

/** A smooth field on the grid of `shape` (low QTT rank): a sum of separable waves shaped by `seed`. */
export function smooth(shape: number[], seed: number, scale = 1): number[] {
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new Array<number>(n);
  for (let t = 0; t < n; t++) {
    let rest = t;
    let v = 0.3 * seed;
    let phase = 0;
    for (let ax = shape.length - 1; ax >= 0; ax--) {
      const x = (rest % shape[ax]!) / shape[ax]!;
      rest = Math.floor(rest / shape[ax]!);
      phase += (1 + ((seed + ax) % 4)) * x;
    }
    v += Math.sin(2 * Math.PI * phase + seed) + 0.5 * Math.cos(Math.PI * phase * (1 + (seed % 3)));
    out[t] = scale * v;
  }
  return out;
}

/** Noise (incompressible: stored as passthrough) in [-amp, amp). */
export function noise(n: number, seed: number, amp = 1): number[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => (2 * r() - 1) * amp);
}

export function npyB64(dtype: QueryDType, shape: number[], values: number[]): string {
  const a = new ARRAYS[dtype](values.length);
  for (let i = 0; i < values.length; i++) a[i] = dtype.startsWith('float') ? values[i]! : Math.round(values[i]!);
  return b64(npyOf(dtype, shape, a));
}

/** put an array; asserts 200 (and the verdict kind, when given) and returns the response body. */
export async function putArray(
  c: Client,
  key: string,
  dtype: QueryDType,
  shape: number[],
  values: number[],
  opts: { metadata?: Record<string, unknown>; namespace?: string; expect?: 'compressed' | 'passthrough' } = {},
): Promise<Record<string, any>> {
  const r = await c.put({ key, data_b64: npyB64(dtype, shape, values), metadata: opts.metadata, namespace: opts.namespace });
  expect(r.status, r.text).to.equal(200);
  if (opts.expect) expect(r.body.compressed, `${key}: ${r.body.verdict}`).to.equal(opts.expect === 'compressed');
  return r.body;
}

/** What serve dense returns for `key`, as float64 values in C order. */
export async function served(c: Client, key: string, namespace?: string): Promise<Float64Array> {
  const a = await c.dense(key, namespace ? { namespace } : {});
  const n = a.data.length / ITEM_SIZE[a.dtype as DType];
  const out = new Float64Array(n);
  const dv = new DataView(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  for (let i = 0; i < n; i++) {
    switch (a.dtype) {
      case 'float64':
        out[i] = dv.getFloat64(i * 8, true);
        break;
      case 'float32':
        out[i] = dv.getFloat32(i * 4, true);
        break;
      case 'int32':
        out[i] = dv.getInt32(i * 4, true);
        break;
      case 'int16':
        out[i] = dv.getInt16(i * 2, true);
        break;
      case 'uint8':
        out[i] = dv.getUint8(i);
        break;
      default:
        throw new Error(`served: dtype ${a.dtype} not handled here`);
    }
  }
  return out;
}

/** The metric on two dense float64 arrays (CONTRACT.md section 6: cosine 0 with a zero norm). */
export function denseMetric(x: ArrayLike<number>, y: ArrayLike<number>, metric: Metric): number {
  let xy = 0;
  let xx = 0;
  let yy = 0;
  let dd = 0;
  for (let i = 0; i < x.length; i++) {
    xy += x[i]! * y[i]!;
    xx += x[i]! * x[i]!;
    yy += y[i]! * y[i]!;
    dd += (x[i]! - y[i]!) ** 2;
  }
  if (metric === 'dot') return xy;
  if (metric === 'euclidean') return Math.sqrt(dd);
  return xx === 0 || yy === 0 ? 0 : xy / Math.sqrt(xx * yy);
}

/** CONTRACT.md section 6: |score - reference| <= 1e-5 * max(1, |score|). */
export function expectAgrees(score: number, reference: number, what: string): void {
  expect(Math.abs(score - reference), `${what}: ${score} vs dense ${reference}`).to.be.at.most(1e-5 * Math.max(1, Math.abs(score)));
}

export function similarity(c: Client, body: Record<string, unknown>): Promise<Reply> {
  return c.call('POST', '/v1/query/similarity', { json: body });
}
export function topk(c: Client, body: Record<string, unknown>): Promise<Reply> {
  return c.call('POST', '/v1/query/topk', { json: body });
}
export function topkVector(c: Client, body: Record<string, unknown>): Promise<Reply> {
  return c.call('POST', '/v1/query/topk_vector', { json: body });
}
export function search(c: Client, body: Record<string, unknown>): Promise<Reply> {
  return c.call('POST', '/v1/query/search', { json: body });
}

/** A problem+json reply with this status and code. */
export function expectProblem(r: Reply, status: number, code: string): void {
  expect(r.status, r.text).to.equal(status);
  expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(r.body.code).to.equal(code);
}
