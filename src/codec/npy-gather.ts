// An .npy upload converted to float64 while it is still arriving. The engine's first step on an array
// is that conversion (into its workspace, in the layout's mode order: C order for row_major); done
// here, a piece at a time on the engine's worker threads while the upload goes on, it overlaps the
// network instead of following it, and the engine starts from the result (engine.compress's
// `gathered`). The event loop only hands out the pieces.
//
// Only what needs no reordering or byte work is converted: float32 and float64, little-endian, in C
// order (or either order when at most one axis is longer than 1), of at least GATHER_MIN_BYTES. For
// anything else, and for a header that does not parse (the put's decode reports it), nothing is
// converted and the put goes on as before.
import type { BufferPool } from '../runtime/buffer-pool.js';
import type { DType } from '../engine/types.js';
import { ProblemError } from '../http/errors.js';
import { NPY_MAX_HEADER_BYTES } from '../limits/input.js';
import { isNpy, numel, parseNpyHeader } from './npy.js';

/** Smaller arrays arrive in a few chunks: nothing to overlap. */
export const GATHER_MIN_BYTES = 1 << 20;
/** Convert in pieces of at least this many new bytes (fewer, larger tasks). */
const STEP_BYTES = 1 << 20;

/**
 * The engine's widen: `src`'s elements as float64 into dst from dstOffset, each square added to
 * lanes[(dstOffset + i) mod 16], off the event loop.
 */
export type Widen = (src: Uint8Array, dtype: DType, dst: Float64Array, dstOffset: number, lanes: Float64Array) => Promise<void>;

/** The converted upload: its values in C order, and the sum of their squares (taken on the way). */
export interface GatheredValues {
  values: Float64Array;
  /**
   * The square lanes' total: the same bits however the upload's chunks arrived, since the pieces
   * are converted one at a time, in order (the engine's compress takes it as gatheredSumSquares).
   */
  sumSquares: number;
}

const SQUARE_LANES = 16;

/**
 * Where a workspace's bytes are counted: the request's hold of the byte budget of requests in flight
 * (admission/byte-budget.ts). A workspace is twice a float32 upload's size and is held from the
 * upload's first MiB until its put ends, where the engine's own (compress's) exists only while a
 * compression runs in its slot: an upload whose workspace does not fit is left to the engine.
 */
export interface WorkspaceBudget {
  /** Take `bytes` now if they fit; false (nothing taken) otherwise. */
  tryGrow(bytes: number): boolean;
  shrink(bytes: number): void;
}

export interface NpyGatherOptions {
  pool: BufferPool;
  widen: Widen;
  budget: WorkspaceBudget;
  /** The body's declared length. */
  total: number;
  /** The elements an .npy shape may have (SVC_GATE_MAX_PAYLOAD_BYTES), as decodeNpy is given. */
  maxElements: number;
  /** Arrays of fewer bytes (and fewer than GATHER_MIN_BYTES) are left alone. */
  minBytes?: number;
}

export class NpyGather {
  /** undefined: header not seen yet; null: not converting this upload. */
  private header: { dataOffset: number; dtype: DType; itemsize: 4 | 8; n: number } | null | undefined = undefined;
  private workspace: Float64Array | null = null;
  private readonly lanes = new Float64Array(SQUARE_LANES);
  private handedOut = 0; // elements given to a conversion
  // One conversion at a time: while one runs, the body's progress waits here, and the next piece
  // takes everything that arrived meanwhile. With a piece per MiB on the pool's threads at once, the
  // conversions, the upload's reads and the client fought over the cores (2 here): a 16 MiB put took
  // 53.7-65.4 ms (median of 40 puts) where one at a time took 46.1-51.5 ms, in five paired runs.
  private inFlight: Promise<void> | null = null;
  private waiting: { body: Buffer; received: number } | null = null;
  private failed = false;
  /** The 400 for a header refused while the upload arrives (the rest need not be read). */
  private refused: ProblemError | null = null;

  private budgeted = 0; // bytes taken from the budget

  constructor(private readonly opts: NpyGatherOptions) {}

  /**
   * `body[0, received)` holds the upload so far (called after each chunk is copied in). The pieces
   * handed out read `body` until finish() or release() settles: the caller keeps it until then.
   * Returns the 400 of a header that decodeNpy would refuse (longer than NPY_MAX_HEADER_BYTES, or
   * malformed) as soon as its bytes are in: the upload can stop there.
   */
  observe(body: Buffer, received: number): ProblemError | undefined {
    if (this.header === undefined) this.header = this.readHeader(body, received);
    if (this.refused) return this.refused;
    const h = this.header;
    if (!h || this.failed) return undefined;
    if (this.inFlight) {
      this.waiting = { body, received };
      return undefined;
    }
    const available = Math.floor((received - h.dataOffset) / h.itemsize);
    if (available < h.n && (available - this.handedOut) * h.itemsize < STEP_BYTES) return undefined;
    if (available <= this.handedOut) return undefined;
    this.workspace ??= new Float64Array(this.opts.pool.acquire(h.n * 8).buffer, 0, h.n);
    const start = h.dataOffset + this.handedOut * h.itemsize;
    const piece = body.subarray(start, start + (available - this.handedOut) * h.itemsize);
    const done = this.opts.widen(piece, h.dtype, this.workspace, this.handedOut, this.lanes).catch(() => {
      this.failed = true; // the engine converts the input itself then
    });
    this.handedOut = available;
    this.inFlight = done.then(() => {
      this.inFlight = null;
      const next = this.waiting;
      this.waiting = null;
      if (next) this.observe(next.body, next.received);
    });
    return undefined;
  }

  /** Every element as float64 in C order once all arrived and are converted; null when not converting. */
  async finish(): Promise<GatheredValues | null> {
    await this.settled();
    if (!this.header || this.failed || this.handedOut !== this.header.n || !this.workspace) return null;
    let sumSquares = 0;
    for (let j = 0; j < SQUARE_LANES; j++) sumSquares += this.lanes[j]!; // in lane order, as the engine's sum_square_lanes
    return { values: this.workspace, sumSquares };
  }

  /** Resolves once no piece is in flight (nothing reads the body any more). */
  async settled(): Promise<void> {
    // A piece that ends may hand out the next before its own promise settles.
    while (this.inFlight) await this.inFlight;
  }

  /** Wait for the pieces in flight, then give the workspace back to the pool (the last touch of it). */
  async release(): Promise<void> {
    await this.settled();
    if (this.workspace) this.opts.pool.release(new Uint8Array(this.workspace.buffer));
    this.opts.budget.shrink(this.budgeted);
    this.budgeted = 0;
    this.workspace = null;
    this.header = null;
  }

  private readHeader(body: Buffer, received: number): NpyGather['header'] {
    if (received < 12) return undefined;
    if (!isNpy(body)) return null;
    const major = body[6];
    const headerEnd = major === 1 ? 10 + body.readUInt16LE(8) : 12 + body.readUInt32LE(8);
    if (received < headerEnd && headerEnd <= NPY_MAX_HEADER_BYTES) return undefined; // (a longer one is refused now)
    let h;
    try {
      h = parseNpyHeader(body.subarray(0, received), this.opts.maxElements);
    } catch (err) {
      if (err instanceof ProblemError) this.refused = err;
      return null;
    }
    const itemsize = h.dtype === 'float32' ? 4 : h.dtype === 'float64' ? 8 : 0;
    const n = numel(h.shape);
    const reorders = h.fortran && h.shape.filter((d) => d > 1).length > 1;
    if (itemsize === 0 || h.swap || reorders) return null;
    const { total, minBytes = 0, budget } = this.opts;
    if (n * itemsize !== total - h.dataOffset || n * itemsize < Math.max(GATHER_MIN_BYTES, minBytes)) return null;
    if (!budget.tryGrow(n * 8)) return null;
    this.budgeted = n * 8;
    return { dataOffset: h.dataOffset, dtype: h.dtype, itemsize, n };
  }
}
