// The hot-path metric series must expose exactly what prom-client's own families would.
import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { counterSeries, HistogramFamily } from '../../src/metrics/series.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED = [0.0005, 0.001, 0.002, 0.05, 0.5, 3, 0.0001];

describe('metric series', () => {
  it('a HistogramFamily prints the text of a prom-client Histogram fed the same values', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const h = new Histogram({
      name: 'x_seconds',
      help: 'help "text"\\',
      labelNames: ['method', 'route'] as const,
      buckets: BUCKETS,
      registers: [theirs],
    });
    const f = new HistogramFamily('x_seconds', 'help "text"\\', ['method', 'route'] as const, BUCKETS, ours);
    const a = f.labels({ method: 'GET', route: '/v1/get/:namespace/:key' });
    const b = f.labels({ method: 'POST', route: '/v1/"put"' });
    for (const v of OBSERVED) {
      h.observe({ method: 'GET', route: '/v1/get/:namespace/:key' }, v);
      a.observe(v);
    }
    h.observe({ method: 'POST', route: '/v1/"put"' }, 0.02);
    b.observe(0.02);
    expect(await ours.metrics()).to.equal(await theirs.metrics());
    // (prom-client's JSON also carries an empty `exemplar` per value; exemplars are not used here)
    const noExemplars = (metrics: Array<{ values: Array<Record<string, unknown>> }>) =>
      metrics.map((m) => ({ ...m, values: m.values.map(({ exemplar: _, ...v }) => v) }));
    expect(noExemplars((await ours.getMetricsAsJSON()) as never)).to.deep.equal(noExemplars((await theirs.getMetricsAsJSON()) as never));
    theirs.resetMetrics();
    ours.resetMetrics();
    h.zero({ method: 'GET', route: '/v1/get/:namespace/:key' });
    h.zero({ method: 'POST', route: '/v1/"put"' });
    expect(await ours.metrics()).to.equal(await theirs.metrics());
  });

  it('a counter series hands every increment to its counter when the registry is read', async () => {
    const registry = new Registry();
    const c = new Counter({
      name: 'y_total',
      help: 'h',
      labelNames: ['outcome'] as const,
      registers: [registry],
      collect() {
        this.inc({ outcome: 'collected' }, 1);
      },
    });
    const admitted = counterSeries(c, { outcome: 'admitted' });
    const charged = counterSeries(c, { outcome: 'charged' });
    for (let i = 0; i < 5; i++) admitted.inc();
    charged.inc(0.5);
    charged.inc(0.25);
    let text = await registry.metrics();
    expect(text).to.include('y_total{outcome="admitted"} 5');
    expect(text).to.include('y_total{outcome="charged"} 0.75');
    expect(text).to.include('y_total{outcome="collected"} 1'); // the counter's own collect still runs
    admitted.inc(2);
    text = await registry.metrics();
    expect(text).to.include('y_total{outcome="admitted"} 7');
    expect(text).to.include('y_total{outcome="charged"} 0.75');
  });
});
