#!/usr/bin/env node
// `ttstore`: the command line over the TypeScript client. Human output by default, --json for scripts;
// progress only when stderr is a terminal; exit codes by failure kind (EXIT below).
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { TtstoreClient, type Progress } from './client.js';
import type { ListResponse } from './generated.js';
import { ApiError, TimeoutError } from './errors.js';
import { encodeNpy } from './npy.js';

/** Exit codes scripts can rely on. */
export const EXIT = { ok: 0, error: 1, usage: 2, notFound: 3, auth: 4, conflict: 5, limited: 6, server: 7, network: 8 } as const;

function exitCodeOf(e: unknown): number {
  if (e instanceof CommanderError || e instanceof UsageError) return EXIT.usage;
  if (e instanceof TimeoutError) return EXIT.network;
  if (e instanceof ApiError) {
    if (e.status === 404) return EXIT.notFound;
    if (e.status === 401 || e.status === 403) return EXIT.auth;
    if (e.status === 409) return EXIT.conflict;
    if (e.status === 402 || e.status === 429) return EXIT.limited;
    if (e.status >= 500) return EXIT.server;
    return EXIT.error;
  }
  if (e instanceof TypeError && /fetch failed/.test(e.message)) return EXIT.network;
  return EXIT.error;
}

class UsageError extends Error {}

interface Globals {
  url?: string;
  apiKey?: string;
  serviceKey?: string;
  profile?: string;
  json?: boolean;
}

interface Profile {
  url?: string;
  api_key?: string;
  service_key?: string;
}

/** The profile file: $TTSTORE_CONFIG, else ~/.config/ttstore/config.json. */
export function profileFile(): string {
  return process.env.TTSTORE_CONFIG || path.join(os.homedir(), '.config', 'ttstore', 'config.json');
}

/**
 * A named profile of the profile file ({"profiles": {"default": {"url", "api_key", "service_key"}}}).
 * A missing file or profile is no error for the default profile (flags and the environment may say
 * everything); a profile asked for by name must exist.
 */
function readProfile(name: string | undefined): Profile {
  const file = profileFile();
  let doc: { profiles?: Record<string, Profile> };
  try {
    doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && name === undefined) return {};
    throw new UsageError(`profile file ${file}: ${(e as Error).message}`);
  }
  const chosen = name ?? process.env.TTSTORE_PROFILE ?? 'default';
  const p = doc.profiles?.[chosen];
  if (!p) {
    if (name === undefined && process.env.TTSTORE_PROFILE === undefined) return {};
    throw new UsageError(`profile "${chosen}" is not in ${file}`);
  }
  return p;
}

/** One axis of --region: START:STOP:STEP (each part may be empty), or one index I (the axis kept, length 1). */
function axisSlice(part: string): [number | null, number | null, number | null] | null {
  const t = part.trim();
  if (t === ':' || t === '::' || t === '') return null;
  const int = (x: string) => {
    if (x.trim() === '') return null;
    const n = Number(x);
    if (!Number.isInteger(n)) throw new UsageError(`--region: "${x}" is not an integer`);
    return n;
  };
  const bits = t.split(':');
  if (bits.length === 1) {
    const i = int(bits[0]!)!;
    return [i, i === -1 ? null : i + 1, 1];
  }
  if (bits.length > 3) throw new UsageError(`--region: "${part}" is not START:STOP:STEP`);
  return [int(bits[0]!), int(bits[1]!), bits.length === 3 ? int(bits[2]!) : null];
}

/** --region "0:64,::2,5": NumPy slices, one per axis, comma-separated. */
export function parseRegion(spec: string): Array<[number | null, number | null, number | null] | null> {
  return spec.split(',').map(axisSlice);
}

/** --level 3 (every axis) or 1,2 (one per axis). */
function parseLevel(spec: string): number | number[] {
  const parts = spec.split(',').map((x) => {
    const n = Number(x);
    if (!Number.isInteger(n) || n < 0) throw new UsageError(`--level: "${x}" is not an integer >= 0`);
    return n;
  });
  return parts.length === 1 && !spec.includes(',') ? parts[0]! : parts;
}

/** --points "[[1,2],[3,4]]": index tuples as JSON. */
function parsePoints(spec: string): number[][] {
  let v: unknown;
  try {
    v = JSON.parse(spec);
  } catch {
    throw new UsageError('--points: expected JSON, e.g. [[1,2],[3,4]]');
  }
  if (!Array.isArray(v) || !v.every((p) => Array.isArray(p) && p.every((i) => Number.isInteger(i)))) {
    throw new UsageError('--points: expected a list of integer index tuples, e.g. [[1,2],[3,4]]');
  }
  return v as number[][];
}

/** NS/KEY: the namespace is everything before the first slash (a namespace has none). */
function target(ref: string): { namespace: string; key: string } {
  const i = ref.indexOf('/');
  if (i <= 0 || i === ref.length - 1) throw new UsageError(`expected NAMESPACE/KEY, got "${ref}"`);
  return { namespace: ref.slice(0, i), key: ref.slice(i + 1) };
}

/** k=v pairs; values that parse as JSON (numbers, booleans, null, quoted strings) keep their type. */
function pairs(list: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of list) {
    const i = p.indexOf('=');
    if (i <= 0) throw new UsageError(`expected key=value, got "${p}"`);
    const v = p.slice(i + 1);
    try {
      out[p.slice(0, i)] = JSON.parse(v);
    } catch {
      out[p.slice(0, i)] = v;
    }
  }
  return out;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

function num(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new UsageError(`not a number: "${v}"`);
  return n;
}

export function size(bytes: number | undefined): string {
  if (bytes === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[u]}`;
}

function table(rows: Array<Record<string, unknown>>, cols: string[]): string {
  const cells = [cols, ...rows.map((r) => cols.map((c) => String(r[c] ?? '-')))];
  const widths = cols.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A progress bar on stderr, only when it is a terminal. */
function progressBar(label: string): ((p: Progress) => void) & { done(): void } {
  const tty = process.stderr.isTTY === true;
  let shown = false;
  const draw = (p: Progress) => {
    if (!tty) return;
    shown = true;
    const frac = p.total ? Math.min(1, p.loaded / p.total) : 0;
    const width = 30;
    const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.');
    const tail = p.total ? `${(frac * 100).toFixed(0).padStart(3)}% ${size(p.loaded)}/${size(p.total)}` : size(p.loaded);
    process.stderr.write(`\r${label} [${bar}] ${tail}`);
  };
  return Object.assign(draw, {
    done() {
      if (shown) process.stderr.write('\n');
    },
  });
}

export function program(): Command {
  const cli = new Command('ttstore')
    .description('Store, query and simulate with a ttstore service (TTSTORE_URL, TTSTORE_API_KEY, TTSTORE_SERVICE_KEY)')
    .option('--url <url>', 'service URL (default: TTSTORE_URL)')
    .option('--api-key <key>', 'tenant API key (default: TTSTORE_API_KEY)')
    .option('--service-key <key>', 'operator service key (default: TTSTORE_SERVICE_KEY)')
    .option('--profile <name>', 'a profile of the profile file (default: TTSTORE_PROFILE, else "default"), read after flags and TTSTORE_*')
    .option('--json', 'print the JSON reply (for scripts)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  const client = (ns?: string): TtstoreClient => {
    const g = cli.opts<Globals>();
    const p = readProfile(g.profile);
    return new TtstoreClient({
      url: g.url ?? process.env.TTSTORE_URL ?? p.url,
      apiKey: g.apiKey ?? process.env.TTSTORE_API_KEY ?? p.api_key,
      serviceKey: g.serviceKey ?? process.env.TTSTORE_SERVICE_KEY ?? p.service_key,
      namespace: ns,
    });
  };
  const out = (json: unknown, human: () => string) => {
    process.stdout.write(`${cli.opts<Globals>().json ? JSON.stringify(json) : human()}\n`);
  };

  cli
    .command('put')
    .description('store an .npy file (an array) or any other file (a blob)')
    .argument('<ns/key>')
    .argument('<file>')
    .option('--tolerance <t>', 'relative error target', num)
    .option('--max-rank <r>', 'rank budget', num)
    .addOption(new Option('--domain <domain>').choices(['structured_data', 'simulation', 'timeseries', 'embedding', 'image', 'lossless']))
    .option('--meta <k=v>', 'metadata (repeatable)', collect)
    .action(async (ref: string, file: string, o: { tolerance?: number; maxRank?: number; domain?: never; meta?: string[] }) => {
      const { namespace, key } = target(ref);
      const bytes = new Uint8Array(await readFile(file));
      const bar = progressBar(`put ${ref}`);
      const meta = o.meta ? pairs(o.meta) : undefined;
      const r = await client(namespace)
        .put(key, bytes, { tolerance: o.tolerance, max_rank: o.maxRank, domain: o.domain, metadata: meta, onUploadProgress: bar })
        .finally(() => bar.done());
      out(r, () => {
        const ratio = r.compression_ratio !== undefined ? `${Number(r.compression_ratio).toFixed(2)}x` : '-';
        return `${namespace}/${key} v${r.version}: ${r.kind} ${r.dtype} [${(r.shape ?? []).join(', ')}], ${size(r.original_bytes)} -> ${size(r.stored_core_bytes)} (${ratio}), verdict ${r.verdict}`;
      });
    });

  cli
    .command('get')
    .description("an entry's metadata")
    .argument('<ns/key>')
    .option('--version <v>', 'a version (default: the latest)', num)
    .action(async (ref: string, o: { version?: number }) => {
      const { namespace, key } = target(ref);
      const r = await client(namespace).get(key, { namespace, version: o.version });
      out(r, () =>
        Object.entries(r)
          .map(([k, v]) => `${k.padEnd(18)} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
          .join('\n'),
      );
    });

  cli
    .command('serve')
    .description('download an entry as an .npy file (a blob as its bytes)')
    .argument('<ns/key>')
    .requiredOption('-o, --output <file>', 'where to write it')
    .option('--version <v>', 'a version (default: the latest)', num)
    .option('--region <slices>', 'read a part: NumPy slices per axis, e.g. "0:64,::2,5" (computed on the cores)')
    .option('--level <n>', 'a coarser grid: average 2^n cells along each axis ("1,2": one level per axis)')
    .option('--points <json>', 'read values at index tuples, e.g. "[[1,2],[3,4]]" (a 1-D array)')
    .action(async (ref: string, o: { output: string; version?: number; region?: string; level?: string; points?: string }) => {
      const { namespace, key } = target(ref);
      const selection = {
        ...(o.region !== undefined ? { region: parseRegion(o.region) } : {}),
        ...(o.level !== undefined ? { level: parseLevel(o.level) } : {}),
        ...(o.points !== undefined ? { points: parsePoints(o.points) } : {}),
      };
      const bar = progressBar(`serve ${ref}`);
      const r = await client(namespace)
        .serve(key, { namespace, version: o.version, ...selection, onDownloadProgress: bar })
        .finally(() => bar.done());
      const bytes = r.kind === 'blob' ? (r.array.data as Uint8Array) : encodeNpy(r.array);
      await writeFile(o.output, bytes);
      const { array: _, ...meta } = r;
      out(
        { ...meta, file: o.output, bytes: bytes.byteLength },
        () => `${o.output}: ${r.kind} ${r.dtype} [${r.shape.join(', ')}] v${r.version}, ${size(bytes.byteLength)}, verdict ${r.verdict}`,
      );
    });

  cli
    .command('ls')
    .description('list the keys of a namespace')
    .argument('<ns>')
    .option('--prefix <p>', 'only keys starting with it')
    .action(async (ns: string, o: { prefix?: string }) => {
      const keys: Array<NonNullable<ListResponse['keys']>[number]> = [];
      for await (const k of client(ns).listAll(ns, { prefix: o.prefix, limit: 1000 })) keys.push(k);
      out({ namespace: ns, prefix: o.prefix ?? '', count: keys.length, keys }, () =>
        table(
          keys.map((k) => ({
            key: k.key,
            version: k.version,
            verdict: k.verdict,
            size: size(k.original_bytes),
            stored: size(k.stored_core_bytes),
            ratio: k.original_bytes && k.stored_core_bytes ? `${(k.original_bytes / k.stored_core_bytes).toFixed(2)}x` : '-',
          })),
          ['key', 'version', 'verdict', 'size', 'stored', 'ratio'],
        ),
      );
    });

  cli
    .command('rm')
    .description('delete an entry (every version)')
    .argument('<ns/key>')
    .action(async (ref: string) => {
      const { namespace, key } = target(ref);
      const r = await client(namespace).delete(key, { namespace });
      out(r, () => `deleted ${ref} (${r.versions} versions, purged after ${new Date(Number(r.purge_after) * 1000).toISOString()})`);
    });

  const metric = () => new Option('--metric <m>').choices(['cosine', 'euclidean', 'dot']);

  cli
    .command('similar')
    .description('the similarity of two entries')
    .argument('<ns/key_a>')
    .argument('<key_b>')
    .addOption(metric())
    .action(async (ref: string, keyB: string, o: { metric?: 'cosine' }) => {
      const { namespace, key } = target(ref);
      const r = await client(namespace).similarity({ namespace, key_a: key, key_b: keyB, metric: o.metric });
      out(r, () => `${r.metric} ${r.score}`);
    });

  const results = (rs: unknown[][] | undefined) =>
    table(
      (rs ?? []).map(([key, score]) => ({ key, score })),
      ['key', 'score'],
    );

  cli
    .command('topk')
    .description('the entries most like one entry')
    .argument('<ns/key>')
    .option('-k <k>', 'how many', num)
    .addOption(metric())
    .option('--filter <k=v>', 'metadata filter (repeatable)', collect)
    .action(async (ref: string, o: { k?: number; metric?: 'cosine'; filter?: string[] }) => {
      const { namespace, key } = target(ref);
      const r = await client(namespace).topk({
        namespace,
        query_key: key,
        k: o.k,
        metric: o.metric,
        filters: o.filter ? pairs(o.filter) : undefined,
      });
      out(r, () => results(r.results));
    });

  cli
    .command('search')
    .description('entries whose metadata matches the filters')
    .argument('<ns>')
    .option('--filter <k=v>', 'metadata filter (repeatable)', collect)
    .action(async (ns: string, o: { filter?: string[] }) => {
      const found: Array<Record<string, unknown>> = [];
      for await (const r of client(ns).searchAll({ namespace: ns, filters: pairs(o.filter) })) found.push(r as Record<string, unknown>);
      out({ namespace: ns, count: found.length, results: found }, () => table(found, ['key', 'version']));
    });

  const sim = cli.command('sim').description('simulation jobs');
  const jobLine = (j: Record<string, any>) => {
    const p = j.progress ?? {};
    const steps = p.steps_total ? ` ${p.steps_completed}/${p.steps_total} steps` : '';
    return `${j.job_id} ${j.solver} ${j.status}${steps}${j.outputs ? ` -> ${j.outputs.join(', ')}` : ''}${j.error ? ` (${j.error.code}: ${j.error.detail})` : ''}`;
  };
  sim
    .command('submit')
    .description('queue a solver run')
    .argument('<solver>')
    .option('--param <k=v>', 'solver parameter (repeatable)', collect)
    .option('--namespace <ns>', 'namespace of its outputs')
    .option('--prefix <p>', 'output key prefix')
    .option('--wait', 'wait until it completes or fails')
    .action(async (solver: string, o: { param?: string[]; namespace?: string; prefix?: string; wait?: boolean }) => {
      const c = client(o.namespace);
      const job = await c.submitSimulation({
        solver: solver as 'poisson_2d',
        params: pairs(o.param) as { n_bits: number },
        output_key_prefix: o.prefix,
      });
      if (!o.wait) return out(job, () => jobLine(job));
      const bar = progressBar(`${solver} ${job.job_id}`);
      const done = await c
        .waitForSimulation(job.job_id!, {
          onStatus: (s) => bar({ loaded: s.progress?.steps_completed ?? 0, total: s.progress?.steps_total || undefined }),
        })
        .finally(() => bar.done());
      out(done, () => jobLine(done));
      if (done.status === 'failed') process.exitCode = EXIT.error;
    });
  sim
    .command('status')
    .argument('<job_id>')
    .action(async (id: string) => {
      const j = await client().simulationStatus(id);
      out(j, () => jobLine(j));
    });
  sim
    .command('list')
    .addOption(new Option('--status <s>').choices(['queued', 'running', 'completed', 'failed']))
    .option('--namespace <ns>')
    .action(async (o: { status?: 'queued'; namespace?: string }) => {
      const r = await client().listSimulations({ status: o.status, namespace: o.namespace });
      out(r, () => (r.jobs ?? []).map((j) => jobLine(j)).join('\n'));
    });
  sim
    .command('cancel')
    .argument('<job_id>')
    .action(async (id: string) => {
      const j = await client().cancelSimulation(id);
      out(j, () => jobLine(j));
    });

  const usageLine = (u: Awaited<ReturnType<TtstoreClient['ownUsage']>>) => () =>
    `${u.tenant_id} ${u.period}: ${u.cus_used} CU of ${u.monthly_quota ?? 'unlimited'}, ${size(u.stored_bytes)} stored`;
  cli
    .command('usage')
    .description("compute units and storage: the API key's own (--own), or per tenant (operator)")
    .argument('[tenant_id]')
    .option('--period <yyyy-mm>')
    .option('--own', "the API key's own usage (GET /v1/usage)")
    .action(async (id: string | undefined, o: { period?: string; own?: boolean }) => {
      if (o.own) {
        if (id !== undefined) throw new UsageError("usage --own takes no tenant_id: it is the API key's tenant");
        const u = await client().ownUsage({ period: o.period });
        return out(u, usageLine(u));
      }
      if (id !== undefined) {
        const u = await client().tenantUsage(id, { period: o.period });
        return out(u, usageLine(u));
      }
      const u = await client().usage({ period: o.period });
      out(u, () => table((u.tenants ?? []) as Array<Record<string, unknown>>, ['tenant_id', 'cus_used', 'monthly_quota']));
    });

  cli
    .command('namespaces')
    .description("the API key's namespaces and what it may do in each")
    .action(async () => {
      const r = await client().namespaces();
      out(r, () => (r.namespaces ?? []).map((n) => `${n.namespace}\t${(n.operations ?? []).join(' ')}`).join('\n'));
    });

  const tenants = cli.command('tenants').description('tenants (operator)');
  const tenantLine = (t: Record<string, any>) =>
    Object.entries(t)
      .map(([k, v]) => `${k.padEnd(20)} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join('\n');
  tenants
    .command('create')
    .argument('<tenant_id>')
    .addOption(new Option('--plan <plan>').choices(['starter', 'builder', 'pro', 'enterprise']))
    .option('--namespace <ns>', 'namespace (repeatable)', collect)
    .option('--email <email>')
    .action(async (id: string, o: { plan?: 'starter'; namespace?: string[]; email?: string }) => {
      const t = await client().createTenant({ tenant_id: id, plan: o.plan, namespaces: o.namespace, email: o.email });
      out(t, () => tenantLine(t));
    });
  tenants.command('list').action(async () => {
    const r = await client().tenants();
    out(r, () => table((r.tenants ?? []) as Array<Record<string, unknown>>, ['tenant_id', 'plan', 'active', 'namespaces']));
  });
  tenants
    .command('rotate-key')
    .argument('<tenant_id>')
    .action(async (id: string) => {
      const r = await client().rotateKey({ tenant_id: id });
      out(r, () => tenantLine(r));
    });
  tenants
    .command('add-namespace')
    .argument('<tenant_id>')
    .argument('<namespace>')
    .action(async (id: string, ns: string) => {
      const r = await client().addNamespace({ tenant_id: id, namespace: ns });
      out(r, () => tenantLine(r));
    });
  tenants
    .command('update-tier')
    .argument('<tenant_id>')
    .addArgument(new Command().createArgument('<plan>').choices(['starter', 'builder', 'pro', 'enterprise']))
    .action(async (id: string, plan: 'starter') => {
      const r = await client().updateTier({ tenant_id: id, plan });
      out(r, () => tenantLine(r));
    });
  tenants
    .command('deactivate')
    .argument('<tenant_id>')
    .action(async (id: string) => {
      const r = await client().deactivate({ tenant_id: id });
      out(r, () => tenantLine(r));
    });
  return cli;
}

/** Runs the command line; resolves with the exit code. */
export async function main(argv: string[]): Promise<number> {
  const cli = program();
  try {
    await cli.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (cli.opts<Globals>().json && e instanceof ApiError) process.stdout.write(`${JSON.stringify(e.problem)}\n`);
    // fetch's own message is only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, ...) is its cause.
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${(e.cause as NodeJS.ErrnoException).code ?? e.cause.message}` : '';
    process.stderr.write(`ttstore: ${e instanceof Error ? e.message : String(e)}${cause}\n`);
    return exitCodeOf(e);
  }
}

process.exitCode = await main(process.argv.slice(2));
