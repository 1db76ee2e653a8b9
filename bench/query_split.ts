// Where the time of one engine top-K goes (bench:query's step 1 split up), on the data of
// bench/query.ts made small: `distinct` fields decomposed once, each held `copies` times in the
// operand pool under its own id (own allocation), scored the way QueryService.rank does.
//   node dist/bench/query_split.js [candidates=10000] [distinct=400] [reps=31]
import { engine, setThreads } from '../src/engine/index.js';
import { topKIndices } from '../src/query/topk.js';
import { sinusoids } from './fields.js';

const N = 1 << 16;
const nc = Number(process.argv[2] ?? 10000);
const distinct = Number(process.argv[3] ?? 400);
const reps = Number(process.argv[4] ?? 31);
const threads = Number(process.env.ENGINE_THREADS ?? 0);
const now = () => process.hrtime.bigint();
const ms = (a: bigint, b: bigint) => Number(b - a) / 1e6;
const best = (xs: number[]) => Math.min(...xs);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (threads > 0) setThreads(threads);
  const pool = engine.createOperandPool();
  const tts = [];
  for (let j = 0; j < distinct; j++) {
    const r = await engine.compress(sinusoids(j, N).data, 'float32', [N], { tolerance: 1e-6 });
    tts.push(r.tt);
  }
  for (let id = 1; id <= nc + 1; id++) await pool.addTrain(id, tts[(id - 1) % distinct]!);
  const rows = Array.from({ length: nc }, (_, j) => ({ id: j + 2, key: `f${String(j + 1).padStart(5, '0')}`, norm: 0 }));
  for (const row of rows) row.norm = await pool.norm(row.id);
  const qNorm = await pool.norm(1);
  const t = {
    prep: [] as number[],
    score: [] as number[],
    scoreCpu: [] as number[],
    one: [] as number[],
    heap: [] as number[],
    total: [] as number[],
  };
  for (let r = 0; r <= reps; r++) {
    const t0 = now();
    const ids = new Float64Array(rows.length);
    const norms = new Float64Array(rows.length);
    for (let j = 0; j < rows.length; j++) {
      ids[j] = rows[j]!.id;
      norms[j] = rows[j]!.norm;
    }
    const t1 = now();
    const c1 = process.cpuUsage();
    const scores = await pool.score(1, qNorm, ids, norms, 'cosine');
    const c2 = process.cpuUsage(c1);
    const t2 = now();
    const best10 = topKIndices(scores, 10, false).map((i) => rows[i]!.key);
    const t3 = now();
    await pool.score(1, qNorm, ids.subarray(0, 1), norms.subarray(0, 1), 'cosine');
    const t4 = now();
    if (r === 0) {
      console.log(`top-10 ${best10.join(',')}`);
      continue;
    }
    t.prep.push(ms(t0, t1));
    t.score.push(ms(t1, t2));
    t.scoreCpu.push((c2.user + c2.system) / 1e3);
    t.heap.push(ms(t2, t3));
    t.one.push(ms(t3, t4));
    t.total.push(ms(t0, t3));
  }
  const line = (name: string, xs: number[]) => `  ${name.padEnd(34)} median ${median(xs).toFixed(3)} ms, best ${best(xs).toFixed(3)} ms`;
  console.log(
    [
      `${nc} candidates (${distinct} distinct fields), engine ${engine.info().threads} threads`,
      line('JS: ids and norms arrays', t.prep),
      line('pool.score (addon + native)', t.score),
      line('  its cpu time (all threads)', t.scoreCpu),
      line('pool.score of 1 candidate', t.one),
      line('JS: bounded heap top-10', t.heap),
      line('total', t.total),
    ].join('\n'),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
