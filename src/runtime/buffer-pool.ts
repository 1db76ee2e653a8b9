// Large transient buffers (request bodies of the binary put, dense arrays that serve reconstructs),
// reused instead of allocated per request. Why: a fresh buffer of many MiB comes from mmap and its
// first touch page-faults every 4 KiB page, which on a VM costs as much as the engine's own work; a
// reused buffer is already mapped (docs/performance.md has the numbers).
//
// Ownership is explicit: acquire() hands out a buffer that nobody else holds; release() takes it back
// and must be the holder's last touch of it (and of every view on it). Idle buffers are kept up to
// `maxIdleBytes`; buffers under `minBytes` are not pooled (malloc serves those from warm memory).

export interface BufferPoolOptions {
  /** Bytes of idle buffers kept for reuse; more are left to the garbage collector. */
  maxIdleBytes: number;
  /** Smaller requests get a plain allocation and are not taken back. */
  minBytes: number;
}

const GRAIN = 1 << 20; // capacities are whole MiB, so near sizes share buffers

export class BufferPool {
  private idle: ArrayBuffer[] = [];
  private idleBytes = 0;
  private readonly lent = new WeakSet<ArrayBuffer>();

  constructor(private readonly opts: BufferPoolOptions) {}

  /**
   * A buffer of exactly `size` bytes (contents undefined, offset 0 of its own ArrayBuffer, so 8-byte
   * aligned): an idle one of at most twice the size when there is one, else a new one.
   */
  acquire(size: number): Buffer {
    if (size < this.opts.minBytes) return Buffer.allocUnsafeSlow(size);
    let best = -1;
    for (let i = 0; i < this.idle.length; i++) {
      const cap = this.idle[i]!.byteLength;
      if (cap >= size && cap <= 2 * size && (best < 0 || cap < this.idle[best]!.byteLength)) best = i;
    }
    let ab: ArrayBuffer;
    if (best >= 0) {
      ab = this.idle[best]!;
      this.idle.splice(best, 1);
      this.idleBytes -= ab.byteLength;
    } else {
      ab = new ArrayBuffer(Math.ceil(size / GRAIN) * GRAIN);
    }
    this.lent.add(ab);
    return Buffer.from(ab, 0, size);
  }

  /** Take back a buffer from acquire() (others, and a second release, are ignored). */
  release(buf: Uint8Array): void {
    const ab = buf.buffer as ArrayBuffer;
    if (!this.lent.has(ab)) return;
    this.lent.delete(ab);
    if (ab.byteLength > this.opts.maxIdleBytes) return;
    this.idle.push(ab);
    this.idleBytes += ab.byteLength;
    // Over budget: drop the oldest idle buffers.
    while (this.idleBytes > this.opts.maxIdleBytes) {
      const old = this.idle.shift()!;
      this.idleBytes -= old.byteLength;
    }
  }

  /** Bytes held idle (for tests and metrics). */
  get idleByteCount(): number {
    return this.idleBytes;
  }
}
