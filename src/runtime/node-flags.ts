// The V8 flags the service process starts with: `npm start`, Dockerfile.cuda's CMD and the tests'
// server all pass these (test/ops/node-flags.test.ts keeps them in step), and main.ts warns when a
// process was started without them.
//
// --initial-old-space-size=128: a 16 MiB put arrives as 256 socket chunks whose external memory
// makes V8 scavenge mid-upload; what those scavenges promote grows the old generation by about
// 0.5 MB a put, and with the default initial old-generation limit (just above the 16 MB the service
// holds after start) every put then ran an incremental mark and a Mark-Compact: about 10 ms of a
// 60 ms put on 2 cores. Starting the limit at 128 MB, 300 puts ran one Mark-Compact, and a put's
// median went from 61-67 to 52 ms (three paired runs of 40). It is a command-line flag only: V8
// sizes the heap before any script runs (v8.setFlagsFromString is too late), and NODE_OPTIONS
// refuses it.
export const SERVICE_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=128'];

/** The service flags absent from `execArgv` (a flag counts as present with any value). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  const name = (flag: string) => flag.split('=')[0]!.replace(/_/g, '-');
  const given = new Set(execArgv.map(name));
  return SERVICE_NODE_FLAGS.filter((f) => !given.has(name(f)));
}
