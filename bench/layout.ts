// Layout choice: each field compressed in row_major, in interleaved and with the engine's own choice
// (no layout given) at the same tolerance, against a textbook TT-SVD in numpy in both layouts
// (bench/ttsvd_numpy.py) and ZFP at the max-abs error the engine reached (bench/zfp_ratio.py), in the
// same run. Ratios are input bytes over stored bytes: the engine's cores as stored (an input kept as
// it is: 1), the textbook's core values at the engine's chosen precision (float32 where the engine
// kept float32), ZFP's stream.
// Put time: the choice against a row_major compress of the same array (best of 3 each).
// Run alone: node dist/bench/layout.js [--quick] ; bench/engine.ts runs it as its last section.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { engine, packageRoot } from '../src/engine/index.js';
import type { CompressResult, LayoutName } from '../src/engine/index.js';
import { diagonalFront2d, gaussian2d, smooth2d, smooth3d } from './fields.js';
import type { Field } from './fields.js';
import { writeNpy } from './npy.js';

const PYTHON = '/usr/bin/python3'; // Debian's python with numpy and zfpy
const LAYOUTS: LayoutName[] = ['row_major', 'interleaved'];

interface Timed {
  r: CompressResult;
  ms: number;
}

async function timed(f: Field, tol: number, layout?: LayoutName): Promise<Timed> {
  let best: Timed | undefined;
  for (let rep = 0; rep < 3; rep++) {
    const t0 = performance.now();
    const r = await engine.compress(f.data, 'float32', f.shape, layout ? { tolerance: tol, layout } : { tolerance: tol });
    const ms = performance.now() - t0;
    if (!best || ms < best.ms) best = { r, ms };
  }
  return best!;
}

function runPython(script: string, cases: object[], dir: string): Map<string, Record<string, number>> {
  const manifest = path.join(dir, `${script}.json`);
  writeFileSync(manifest, JSON.stringify(cases));
  const py = spawnSync(PYTHON, [path.join(packageRoot(), 'bench', script), manifest], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (py.status !== 0) throw new Error(`${script} failed (${PYTHON}; needs python3-numpy and python3-zfpy): ${py.stderr}`);
  const out = new Map<string, Record<string, number>>();
  for (const line of py.stdout.trim().split('\n')) {
    const o = JSON.parse(line) as Record<string, number> & { name: string };
    out.set(o.name, o);
  }
  return out;
}

export async function layoutComparison(quick = false): Promise<void> {
  const tols = [1e-3, 1e-6];
  const fields: (() => Field)[] = quick
    ? [() => diagonalFront2d(1024), () => smooth2d(1024)]
    : [() => diagonalFront2d(1024), () => diagonalFront2d(2048), () => smooth2d(1024), () => gaussian2d(1024), () => smooth3d(128)];
  const dir = mkdtempSync(path.join(tmpdir(), 'ttstore-bench-layout-'));
  try {
    const rows: Array<{ name: string; tol: number; bytes: number; forced: Timed[]; chosen: Timed; file: string }> = [];
    const numpyCases: object[] = [];
    const zfpCases: object[] = [];
    for (const make of fields) {
      const f = make();
      const file = path.join(dir, `${f.name.replace(/[^A-Za-z0-9_]/g, '_')}.npy`);
      writeNpy(file, f.data, f.shape);
      for (const tol of tols) {
        const forced = [];
        for (const layout of LAYOUTS) forced.push(await timed(f, tol, layout));
        const chosen = await timed(f, tol);
        const name = `${f.name}@${tol.toExponential(0)}`;
        rows.push({ name, tol, bytes: f.data.byteLength, forced, chosen, file });
        for (const layout of LAYOUTS) {
          numpyCases.push({ name: `${name}/${layout}`, file, layout, modes: engine.layoutFor(f.shape, layout).modes, tol });
        }
        const maxAbs = chosen.r.compressible ? chosen.r.fingerprint.max_abs_error : 0;
        if (maxAbs > 0) zfpCases.push({ name, file, tolerance: maxAbs });
      }
    }
    const numpy = runPython('ttsvd_numpy.py', numpyCases, dir);
    const zfp = runPython('zfp_ratio.py', zfpCases, dir);

    console.log('\n# layout choice: engine in each layout and its own choice, textbook TT-SVD (numpy) in each layout, ZFP');
    console.log(
      '# ratio = input bytes / stored bytes (engine: cores as stored, 1 when kept as it is; textbook: its core values at the precision of the chosen cores; ZFP: its stream at the max-abs error the chosen train reached)',
    );
    console.log(
      '| field | tol | row_major | interleaved | chosen | chosen / best forced bytes | put ms row_major / chosen | textbook row_major | textbook interleaved | chosen / best textbook | ZFP | chosen / ZFP |',
    );
    console.log('|---|---|---:|---:|---|---:|---|---:|---:|---:|---:|---:|');
    const stored = (t: Timed, bytes: number) => (t.r.compressible ? t.r.storedCoreBytes : bytes);
    for (const row of rows) {
      const [rm, il] = row.forced as [Timed, Timed];
      const ratio = (b: number) => row.bytes / b;
      const chosenBytes = stored(row.chosen, row.bytes);
      const bestForced = Math.min(stored(rm, row.bytes), stored(il, row.bytes));
      // The textbook's cores at the precision the engine kept (float32 when that met the target).
      const perValue = row.chosen.r.tt.cores[0] instanceof Float32Array ? 4 : 8;
      const textbook = LAYOUTS.map((l) => perValue * numpy.get(`${row.name}/${l}`)!.core_elements!);
      const z = zfp.get(row.name);
      const cells = [
        row.name.split('@')[0],
        row.tol.toExponential(0),
        ratio(stored(rm, row.bytes)).toFixed(1),
        ratio(stored(il, row.bytes)).toFixed(1),
        `${ratio(chosenBytes).toFixed(1)} (${row.chosen.r.layout})`,
        (chosenBytes / bestForced).toFixed(3),
        `${rm.ms.toFixed(0)} / ${row.chosen.ms.toFixed(0)} (${(row.chosen.ms / rm.ms).toFixed(2)}x)`,
        ratio(textbook[0]!).toFixed(1),
        ratio(textbook[1]!).toFixed(1),
        (Math.min(...textbook) / chosenBytes).toFixed(2),
        z ? ratio(z.bytes!).toFixed(1) : '-',
        z ? (z.bytes! / chosenBytes).toFixed(1) : '-',
      ];
      console.log(`| ${cells.join(' | ')} |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await layoutComparison(process.argv.includes('--quick'));
}
