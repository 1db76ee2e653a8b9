// The V8 flags the service process starts with: `npm start`, Dockerfile.cuda's CMD and the tests'
// server all pass these (test/ops/node-flags.test.ts keeps them in step), and main.ts warns when a
// process was started without them. The measurements behind them: docs/performance.md.
//
// --initial-old-space-size=128: why: what an upload's scavenges promote would otherwise push the old
// generation past its small initial limit on every put, and each put would pay a Mark-Compact. A
// command-line flag only: V8 sizes the heap before any script runs, and NODE_OPTIONS refuses it.
export const SERVICE_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=128'];

/** The service flags absent from `execArgv` (a flag counts as present with any value). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const name = (flag: string) => flag.split('=')[0]!.replace(/_/g, '-');
  const given = new Set(execArgv.map(name));
  return SERVICE_NODE_FLAGS.filter((f) => !given.has(name(f)));
}
