// The engine as the services see it, with every array-touching call timed and sized: a histogram and
// byte counters per operation (/gate/metrics) and a debug log line per call. A decorator rather than
// code in src/engine so that the engine stays a plain typed face of the addon; methods this file does
// not know (added later) pass through untouched via the prototype.
import type { Logger } from '../runtime/log.js';
import type { ArrayBytes, Engine, OperandPool } from '../engine/types.js';
import { coreBytes } from '../store/cores.js';
import type { EngineMetrics } from './registry.js';

const byteLength = (a: ArrayBytes | undefined): number => a?.byteLength ?? 0;

export function instrumentEngine(inner: Engine, metrics: EngineMetrics, log: Logger): Engine {
  /** Time `call`; on success record bytes in/out (out computed from the result). */
  async function timed<T>(op: string, bytesIn: number, call: () => Promise<T>, bytesOut: (r: T) => number): Promise<T> {
    const started = process.hrtime.bigint();
    let ok = false;
    try {
      const r = await call();
      ok = true;
      const out = bytesOut(r);
      metrics.bytes.inc({ op, direction: 'in' }, bytesIn);
      metrics.bytes.inc({ op, direction: 'out' }, out);
      return r;
    } finally {
      const s = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.seconds.observe({ op }, s);
      if (log.isLevelEnabled('debug')) {
        log.debug({ engine_op: op, duration_ms: Math.round(s * 1e6) / 1e3, bytes_in: bytesIn, ok }, 'engine call');
      }
    }
  }

  const wrapped: Partial<Engine> = {
    compress(data, dtype, shape, opts) {
      return timed(
        'compress',
        byteLength(data),
        () => inner.compress(data, dtype, shape, opts),
        (r) => {
          if (r.storedCoreBytes > 0) metrics.compressionRatio.observe(byteLength(data) / r.storedCoreBytes);
          return r.storedCoreBytes;
        },
      );
    },
    reconstruct(tt, shape, layout, dtype, reference, out) {
      return timed(
        'reconstruct',
        coreBytes(tt) + byteLength(reference),
        () => inner.reconstruct(tt, shape, layout, dtype, reference, out),
        (r) => r.data.byteLength,
      );
    },
    reconstructSelection(tt, shape, layout, dtype, selection) {
      return timed(
        'reconstruct_selection',
        coreBytes(tt),
        () => inner.reconstructSelection(tt, shape, layout, dtype, selection),
        (r) => r.byteLength,
      );
    },
    selectDense(data, dtype, shape, selection) {
      return timed(
        'select_dense',
        byteLength(data),
        () => inner.selectDense(data, dtype, shape, selection),
        (r) => r.byteLength,
      );
    },
    fingerprint(tt, shape, layout, reference, dtype) {
      return timed(
        'fingerprint',
        coreBytes(tt) + byteLength(reference),
        () => inner.fingerprint(tt, shape, layout, reference, dtype),
        () => 0,
      );
    },
    norm(a) {
      return timed(
        'contract',
        coreBytes(a),
        () => inner.norm(a),
        () => 0,
      );
    },
    createOperandPool(): OperandPool {
      const pool = inner.createOperandPool();
      return {
        ...pool,
        addTrain: (id, tt, modes) =>
          timed(
            'pool_load',
            coreBytes(tt),
            () => pool.addTrain(id, tt, modes),
            (held) => held,
          ),
        addDense: (id, data, dtype, shape, layout) =>
          timed(
            'pool_load',
            byteLength(data),
            () => pool.addDense(id, data, dtype, shape, layout),
            (held) => held,
          ),
        // The operands already sit in native memory: a score reads no bytes across the boundary.
        score: (queryId, queryNorm, ids, norms, metric) =>
          timed(
            'contract',
            0,
            () => pool.score(queryId, queryNorm, ids, norms, metric),
            () => 0,
          ),
      };
    },
  };
  return Object.assign(Object.create(inner) as Engine, wrapped);
}
