// The process's Prometheus registry (prom-client) and the metrics every layer records into. One
// registry of our own, never prom-client's global one, so tests and embedders can run several servers
// in one process without their numbers mixing. Labels are bounded sets (route templates, status
// codes, operation names): never a key, a tenant or a raw path.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { HistogramFamily } from './series.js';

/** Latency buckets in seconds: 1 ms .. 60 s (a put of a 256 MiB array takes seconds). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Compression ratios (original bytes / core bytes): 1 (nothing gained) .. 1e6. */
const RATIO_BUCKETS = [1, 1.5, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384, 65536, 1e6];

export interface HttpMetrics {
  requests: Counter<'method' | 'route' | 'status'>;
  /** Observed on every request: a HistogramFamily (series.ts), prom-client's exposition. */
  duration: HistogramFamily<'method' | 'route' | 'status'>;
}

export interface EngineMetrics {
  /** Wall time of an engine call, by operation (compress, reconstruct, fingerprint, contract, score, ...). */
  seconds: Histogram<'op'>;
  /** Bytes an engine call read (`in`) and produced (`out`), by operation. */
  bytes: Counter<'op' | 'direction'>;
  /** Ratio of each compression the engine made (input data bytes / core bytes). */
  compressionRatio: Histogram;
}

export interface Metrics {
  registry: Registry;
  http: HttpMetrics;
  engine: EngineMetrics;
}

/** A fresh registry with the default process metrics and the HTTP and engine families. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const http: HttpMetrics = {
    requests: new Counter({
      name: 'ttstore_http_requests_total',
      help: 'HTTP requests answered, by method, route template (unmatched for no route) and status.',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    duration: new HistogramFamily(
      'ttstore_http_request_duration_seconds',
      'Time from the request arriving to its response being handed to Node, by method, route template and status.',
      ['method', 'route', 'status'] as const,
      LATENCY_BUCKETS,
      registry,
    ),
  };
  const engine: EngineMetrics = {
    seconds: new Histogram({
      name: 'ttstore_engine_duration_seconds',
      help: 'Wall time of engine calls (native, off the event loop), by operation.',
      labelNames: ['op'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    bytes: new Counter({
      name: 'ttstore_engine_bytes_total',
      help: 'Bytes engine calls read (direction="in") and produced (direction="out"), by operation.',
      labelNames: ['op', 'direction'] as const,
      registers: [registry],
    }),
    compressionRatio: new Histogram({
      name: 'ttstore_engine_compression_ratio',
      help: 'Input data bytes over core bytes of each compression the engine made (before the Oracle decides to keep it).',
      buckets: RATIO_BUCKETS,
      registers: [registry],
    }),
  };
  return { registry, http, engine };
}

/** Exposition body and its content type (text format 0.0.4). */
export async function exposition(registry: Registry): Promise<{ body: string; contentType: string }> {
  return { body: await registry.metrics(), contentType: registry.contentType };
}
