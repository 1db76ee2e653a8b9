// The README's console sessions, run in order with bash against a fresh server, so the front door
// cannot rot: every command must exit 0 and print output of the shape the README shows.
//
// Convention: in a ```console block, a line starting with `$ ` is a command and the lines below it,
// up to the next command, are its output. The values differ from run to run; the shape does not.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type TestServer } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Step {
  line: number;
  command: string;
  output: string[];
}

/** Each `$ ` command of every ```console block, with the output lines shown below it. */
export function consoleSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  let inBlock = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^```/.test(text)) {
      inBlock = !inBlock && text.trim() === '```console';
      return;
    }
    if (!inBlock) return;
    if (text.startsWith('$ ')) steps.push({ line: i + 1, command: text.slice(2), output: [] });
    else if (steps.length > 0) steps[steps.length - 1].output.push(text);
  });
  for (const s of steps) while (s.output.length > 0 && s.output[s.output.length - 1].trim() === '') s.output.pop();
  return steps;
}

// String values compared exactly: the ones that name a state or a kind, not an identifier or a time.
const EXACT_STRINGS = new Set(['status', 'code', 'verdict', 'kind', 'dtype', 'layout', 'metric', 'solver', 'plan']);

/** Where `actual` differs in shape from `shown`: keys missing, types, array lengths, exact strings. */
function shapeErrors(shown: unknown, actual: unknown, at = '$', key = ''): string[] {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(shown) !== kind(actual)) return [`${at}: ${kind(actual)} where the README shows ${kind(shown)}`];
  if (Array.isArray(shown)) {
    const a = actual as unknown[];
    if (a.length !== shown.length) return [`${at}: ${a.length} items where the README shows ${shown.length}`];
    return shown.flatMap((v, i) => shapeErrors(v, a[i], `${at}[${i}]`, key));
  }
  if (kind(shown) === 'object') {
    const a = actual as Record<string, unknown>;
    return Object.entries(shown as Record<string, unknown>).flatMap(([k, v]) =>
      k in a ? shapeErrors(v, a[k], `${at}.${k}`, k) : [`${at}: no key ${k}`],
    );
  }
  if (typeof shown === 'boolean' || (typeof shown === 'string' && EXACT_STRINGS.has(key))) {
    return shown === actual ? [] : [`${at}: ${JSON.stringify(actual)} where the README shows ${JSON.stringify(shown)}`];
  }
  return [];
}

const NUMBER = /-?\d+(\.\d+)?(e[-+]?\d+)?/gi;

/** Text with every number replaced, so that `float64 (512, 512) 2.46e-07` matches `... 1e-7`. */
const numbersOut = (text: string) => text.replace(NUMBER, '#').replace(/\s+/g, ' ').trim();

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Where the printed output differs in shape from the lines the README shows. */
export function outputErrors(shown: string[], printed: string): string[] {
  if (shown.length === 0) return [];
  const lines = printed.replace(/\r/g, '').replace(/\n+$/, '').split('\n');
  if (shown[0].startsWith('HTTP/')) {
    const errors: string[] = [];
    if (lines[0] !== shown[0]) errors.push(`status line ${JSON.stringify(lines[0])}, the README shows ${JSON.stringify(shown[0])}`);
    const headEnd = (ls: string[]) => (ls.indexOf('') < 0 ? ls.length : ls.indexOf(''));
    const names = new Set(lines.slice(1, headEnd(lines)).map((l) => l.split(':')[0].toLowerCase()));
    for (const h of shown.slice(1, headEnd(shown))) {
      if (!names.has(h.split(':')[0].toLowerCase())) errors.push(`no header ${h.split(':')[0]}`);
    }
    const shownBody = shown.slice(headEnd(shown) + 1).join('\n');
    if (shownBody) errors.push(...outputErrors(shown.slice(headEnd(shown) + 1), lines.slice(headEnd(lines) + 1).join('\n')));
    return errors;
  }
  const shownJson = /^[[{]/.test(shown[0]) ? parseJson(shown.join('\n')) : undefined;
  if (shownJson !== undefined) {
    const actual = parseJson(lines.join('\n'));
    return actual === undefined ? [`not JSON: ${lines.join('\n').slice(0, 300)}`] : shapeErrors(shownJson, actual);
  }
  if (numbersOut(lines.join('\n')) === numbersOut(shown.join('\n'))) return [];
  return [`printed ${JSON.stringify(lines.join('\n').slice(0, 300))}, the README shows ${JSON.stringify(shown.join('\n'))}`];
}

describe('README sessions', function () {
  const steps = consoleSteps(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  const results: { rc: number; out: string; err: string }[] = [];
  let server: TestServer;
  let work: string;

  before(async function () {
    this.timeout(180000);
    server = await startServer();
    work = await mkdtemp(path.join(os.tmpdir(), 'ttstore-readme-'));
    // One shell for the whole page, so that what a command sets (variables, functions) holds for the
    // next; each command's output and status go to files of their own.
    const script = ['set +e', `cd ${JSON.stringify(work)}`];
    steps.forEach((s, i) => script.push(`{\n${s.command}\n} >.out.${i} 2>.err.${i} </dev/null`, `echo $? >.rc.${i}`));
    await writeFile(path.join(work, '.session.sh'), script.join('\n') + '\n');
    // The variables the quick start has the operator set.
    const env = {
      ...process.env,
      TTS_URL: server.url,
      SERVICE_KEY: server.serviceKey,
      PATH: `${path.join(ROOT, 'clients', 'typescript', 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      PYTHONPATH: path.join(ROOT, 'clients', 'python'),
    };
    spawnSync('bash', [path.join(work, '.session.sh')], { env, timeout: 150000, stdio: 'ignore' });
    for (let i = 0; i < steps.length; i++) {
      const read = (name: string) => readFile(path.join(work, `.${name}.${i}`), 'utf8').catch(() => '');
      const rc = await read('rc');
      results.push({ rc: rc === '' ? -1 : Number(rc), out: await read('out'), err: await read('err') });
    }
    // README_OUTPUTS=<file>: what each command printed, to refresh the outputs the README shows.
    if (process.env.README_OUTPUTS) {
      const printed = steps.map((s, i) => ({ line: s.line, command: s.command, ...results[i] }));
      await writeFile(process.env.README_OUTPUTS, JSON.stringify(printed, null, 2));
    }
  });

  after(async function () {
    await server?.destroy();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('has console sessions', () => {
    expect(steps.length).to.be.greaterThan(10);
  });

  steps.forEach((s, i) => {
    it(`README.md:${s.line} ${s.command.slice(0, 80)}`, () => {
      const r = results[i];
      expect(r.rc, `exit status ${r.rc}: ${(r.err || r.out).slice(0, 500)}`).to.equal(0);
      const errors = outputErrors(s.output, r.out);
      expect(errors, errors.join('\n')).to.deep.equal([]);
    });
  });
});
