// Layout comparison: the same 2-D and 3-D fields compressed with row_major and with interleaved
// mode order at the same tolerance, to choose (and document) the engine's default.
// Run alone: node dist/bench/layout.js ; bench/engine.ts runs it as its last section.
import { pathToFileURL } from 'node:url';

import { engine } from '../src/engine/index.js';
import type { LayoutName } from '../src/engine/index.js';
import { diagonalFront2d, gaussian2d, smooth2d, smooth3d } from './fields.js';
import type { Field } from './fields.js';

export async function layoutComparison(tols: number[] = [1e-3, 1e-6]): Promise<void> {
  console.log('\n# layout comparison: row_major vs interleaved (engine, same field and tolerance)');
  console.log('# ratio = original float32 bytes / stored core bytes; default = engine.layoutFor(shape)');
  const fields: (() => Field)[] = [() => smooth2d(1024), () => gaussian2d(1024), () => diagonalFront2d(1024), () => smooth3d(256)];
  for (const make of fields) {
    const f = make();
    const bytes = f.data.byteLength;
    for (const tol of tols) {
      const cells: string[] = [];
      for (const layout of ['row_major', 'interleaved'] as LayoutName[]) {
        const t0 = performance.now();
        const r = await engine.compress(f.data, 'float32', f.shape, { tolerance: tol, layout });
        const ms = performance.now() - t0;
        cells.push(
          `${layout}: max_rank=${Math.max(...r.tt.ranks)} ratio=${(bytes / r.storedCoreBytes).toFixed(1)} ` +
            `ms=${ms.toFixed(0)} rel_err=${r.fingerprint.relative_error.toExponential(2)}`,
        );
      }
      console.log(`${f.name} tol=${tol.toExponential(0)} | ${cells.join(' | ')} | default=${engine.layoutFor(f.shape).layout}`);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await layoutComparison();
}
