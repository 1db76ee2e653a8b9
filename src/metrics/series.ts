// Metric series updated on every request at the cost of an addition.
//
// prom-client hashes and validates a label object on every inc() and observe(), through labels()
// too (its bound observe also makes a closure per call): on a metadata GET that was about 3% of the
// server's CPU. A series here is a plain object found once per label set; the numbers reach the
// registry when it is read, in the same exposition as prom-client's own families.
import type { Counter, LabelValues, MetricValueWithName, Registry } from 'prom-client';

/** What a family gives the registry when it is read (prom-client's shape for a histogram). */
interface FamilyValues {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: MetricValueWithName<string>[];
}

/** A counter series: inc() adds to a number that `counter` receives when its registry is read. */
export interface CounterSeries {
  inc(value?: number): void;
}

const pendingOf = new WeakMap<Counter<string>, Array<{ labels: LabelValues<string>; pending: number }>>();

/**
 * A series of `counter` with fixed `labels`, for a hot path. Increments are held here and added to
 * the counter by its collect hook, so a scrape sees every one of them.
 */
export function counterSeries<T extends string>(counter: Counter<T>, labels: LabelValues<T>): CounterSeries {
  let list = pendingOf.get(counter as Counter<string>);
  if (!list) {
    const series: Array<{ labels: LabelValues<string>; pending: number }> = [];
    list = series;
    pendingOf.set(counter as Counter<string>, series);
    const hooked = counter as unknown as { collect?: () => unknown };
    const previous = hooked.collect;
    hooked.collect = function collect(this: unknown) {
      for (const s of series) {
        if (s.pending === 0) continue;
        const v = s.pending;
        s.pending = 0;
        (counter as Counter<string>).inc(s.labels, v);
      }
      return previous?.call(this);
    };
  }
  const s = { labels: labels as LabelValues<string>, pending: 0 };
  list.push(s);
  return {
    inc(value = 1) {
      s.pending += value;
    },
  };
}

/** A histogram series: observe() counts a value into its bucket. */
export interface HistogramSeries {
  observe(value: number): void;
}

interface HistogramData {
  labels: LabelValues<string>;
  /** Per bucket (not cumulative); the last one is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram family (name, help, label names, bucket bounds) registered in a prom-client registry,
 * whose series are looked up once by their caller and updated with a bucket search and three
 * additions. Its exposition is prom-client's histogram's: `_bucket` (cumulative, `le`), `_sum`, `_count`.
 */
export class HistogramFamily<T extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramData>();
  private readonly bounds: number[];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly T[],
    buckets: readonly number[],
    registry: Registry,
  ) {
    this.bounds = [...buckets].sort((a, b) => a - b);
    registry.registerMetric(this as never);
  }

  /** The series of one label set (made on first use; keep it, the lookup builds a key). */
  labels(labels: LabelValues<T>): HistogramSeries {
    const key = this.labelNames.map((n) => String(labels[n] ?? '')).join('\u0000');
    let d = this.series.get(key);
    if (!d)
      this.series.set(
        key,
        (d = { labels: { ...labels } as LabelValues<string>, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }),
      );
    const data = d;
    const bounds = this.bounds;
    return {
      observe(value: number) {
        if (!Number.isFinite(value)) return; // (prom-client throws; a metric must never fail a request)
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        data.counts[i]! += 1;
        data.sum += value;
        data.count += 1;
      },
    };
  }

  /**
   * What the registry formats into text: prom-client's histogram values, the series' labels as
   * `sharedLabels` after `le` (so the text is prom-client's, label order included).
   */
  async getForPromString(): Promise<FamilyValues> {
    const values: Array<MetricValueWithName<string> & { sharedLabels: LabelValues<string> }> = [];
    const bucket = `${this.name}_bucket`;
    for (const d of this.series.values()) {
      let acc = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        acc += d.counts[i]!;
        values.push({ labels: { le: this.bounds[i]! }, sharedLabels: d.labels, value: acc, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: d.labels, value: d.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: d.labels, value: d.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: d.labels, value: d.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }

  /** The JSON view (registry.getMetricsAsJSON()): each value's labels in one object. */
  async get(): Promise<FamilyValues> {
    const data = await this.getForPromString();
    data.values = data.values.map((v) => {
      const { sharedLabels, labels, ...rest } = v as typeof v & { sharedLabels: LabelValues<string> };
      return { ...rest, labels: { ...labels, ...sharedLabels } };
    });
    return data;
  }

  /** registry.resetMetrics(): every series back to zero. */
  reset(): void {
    for (const d of this.series.values()) {
      d.counts.fill(0);
      d.sum = 0;
      d.count = 0;
    }
  }
}
