import { expect } from 'chai';
import { BufferPool } from '../../src/runtime/buffer-pool.js';

const MiB = 1 << 20;

describe('storage: the pool of large transient buffers', () => {
  it('hands a released buffer to the next request of a similar size, and never one buffer to two holders', () => {
    const pool = new BufferPool({ maxIdleBytes: 64 * MiB, minBytes: MiB });
    const a = pool.acquire(16 * MiB + 128);
    const b = pool.acquire(16 * MiB + 128);
    expect(a.length).to.equal(16 * MiB + 128);
    expect(a.buffer).to.not.equal(b.buffer);
    expect(a.byteOffset).to.equal(0);
    pool.release(a);
    const c = pool.acquire(16 * MiB); // fits in a's capacity
    expect(c.buffer).to.equal(a.buffer);
    expect(c.length).to.equal(16 * MiB);
    const d = pool.acquire(16 * MiB); // a's buffer is lent again: a new one
    expect(d.buffer).to.not.equal(a.buffer);
    expect(d.buffer).to.not.equal(b.buffer);
  });

  it('takes a buffer back once: a second release does not let two holders share it', () => {
    const pool = new BufferPool({ maxIdleBytes: 64 * MiB, minBytes: MiB });
    const a = pool.acquire(2 * MiB);
    pool.release(a);
    pool.release(a);
    expect(pool.idleByteCount).to.equal(2 * MiB);
    const b = pool.acquire(2 * MiB);
    const c = pool.acquire(2 * MiB);
    expect(b.buffer).to.not.equal(c.buffer);
  });

  it('does not lend a buffer more than twice the size asked for', () => {
    const pool = new BufferPool({ maxIdleBytes: 64 * MiB, minBytes: MiB });
    const big = pool.acquire(32 * MiB);
    pool.release(big);
    const small = pool.acquire(2 * MiB);
    expect(small.buffer).to.not.equal(big.buffer);
  });

  it('keeps at most maxIdleBytes idle and does not pool small buffers', () => {
    const pool = new BufferPool({ maxIdleBytes: 8 * MiB, minBytes: MiB });
    const bufs = [pool.acquire(3 * MiB), pool.acquire(3 * MiB), pool.acquire(3 * MiB)];
    for (const b of bufs) pool.release(b);
    expect(pool.idleByteCount).to.equal(6 * MiB);
    const small = pool.acquire(1000);
    expect(small.length).to.equal(1000);
    pool.release(small);
    expect(pool.idleByteCount).to.equal(6 * MiB);
    pool.release(Buffer.alloc(4 * MiB)); // not from the pool: ignored
    expect(pool.idleByteCount).to.equal(6 * MiB);
  });
});
