// An .npy upload converted to float64 while it is still arriving. The engine's first step on an array
// is that conversion (into its workspace, in the layout's mode order: C order for row_major); done
// here, chunk by chunk during the upload, it overlaps the network instead of following it, and the
// engine starts from the result (engine.compress's `gathered`).
//
// Only what needs no reordering or byte work is converted: float32 and float64, little-endian, in C
// order (or either order when at most one axis is longer than 1), of at least GATHER_MIN_BYTES. For
// anything else, and for a header that does not parse (the put's decode reports it), nothing is
// converted and the put goes on as before.
import type { BufferPool } from '../buffer-pool.js';
import { isNpy, numel, parseNpyHeader } from './npy.js';

/** Smaller arrays arrive in a few chunks: nothing to overlap. */
export const GATHER_MIN_BYTES = 1 << 20;
/** Convert in steps of at least this many new bytes (fewer, larger copies). */
const STEP_BYTES = 1 << 20;

export class NpyGather {
  /** undefined: header not seen yet; null: not converting this upload. */
  private header: { dataOffset: number; itemsize: 4 | 8; n: number } | null | undefined = undefined;
  private workspace: Float64Array | null = null;
  private converted = 0; // elements

  /** `total`: the body's declared length; arrays of fewer than `minBytes` (and GATHER_MIN_BYTES) are left alone. */
  constructor(private readonly pool: BufferPool, private readonly total: number, private readonly minBytes = 0) {}

  /** `body[0, received)` holds the upload so far (called after each chunk is copied in). */
  advance(body: Buffer, received: number): void {
    if (this.header === undefined) this.header = this.readHeader(body, received);
    const h = this.header;
    if (!h) return;
    const available = Math.floor((received - h.dataOffset) / h.itemsize);
    if (available < h.n && (available - this.converted) * h.itemsize < STEP_BYTES) return;
    if (available <= this.converted) return;
    this.workspace ??= new Float64Array(this.pool.acquire(h.n * 8).buffer, 0, h.n);
    const start = body.byteOffset + h.dataOffset + this.converted * h.itemsize;
    const count = available - this.converted;
    const src = h.itemsize === 4 ? new Float32Array(body.buffer, start, count) : new Float64Array(body.buffer, start, count);
    this.workspace.set(src, this.converted);
    this.converted = available;
  }

  /** Every element as float64 in C order, once all of them arrived; null when not converting. */
  result(): Float64Array | null {
    return this.header && this.converted === this.header.n ? this.workspace : null;
  }

  /** Give the workspace back to the pool (the holder's last touch of it, and of result()). */
  release(): void {
    if (this.workspace) this.pool.release(new Uint8Array(this.workspace.buffer));
    this.workspace = null;
    this.header = null;
  }

  private readHeader(body: Buffer, received: number): NpyGather['header'] {
    if (received < 12) return undefined;
    if (!isNpy(body)) return null;
    const major = body[6];
    const headerEnd = major === 1 ? 10 + body.readUInt16LE(8) : 12 + body.readUInt32LE(8);
    if (received < headerEnd) return undefined;
    let h;
    try {
      h = parseNpyHeader(body.subarray(0, received));
    } catch {
      return null; // the put's own decode answers with the 400
    }
    const itemsize = h.dtype === 'float32' ? 4 : h.dtype === 'float64' ? 8 : 0;
    const n = numel(h.shape);
    const reorders = h.fortran && h.shape.filter((d) => d > 1).length > 1;
    if (itemsize === 0 || h.swap || reorders) return null;
    if (n * itemsize !== this.total - h.dataOffset || n * itemsize < Math.max(GATHER_MIN_BYTES, this.minBytes)) return null;
    if ((body.byteOffset + h.dataOffset) % itemsize !== 0) return null; // typed-array views need alignment
    return { dataOffset: h.dataOffset, itemsize, n };
  }
}
