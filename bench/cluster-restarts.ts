// Failures by kind while a command (a node's restart, an nginx reload) runs again and again under load
// through a running cluster's nginx (docs/performance.md, graceful restart):
//   node dist/bench/cluster-restarts.js 10 -- bash scripts/cluster.sh restart-node 1
// with the exports of `scripts/cluster.sh start` (TTSTORE_URL, TTSTORE_SERVICE_KEY) and its settings.
// Load: loops of gets and of puts, each on node's http.Agent and on fetch (both keep-alive), a tenant
// per loop (CONTRACT 8's in-flight limit is per tenant). A failure is its status, or the client's error code
// with whether the connection was a reused one.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { createTenant, tenantHeaders, type CreatedTenant } from '../test/helpers/tenants.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const GET_LOOPS = 12; // per client kind
const PUT_LOOPS = 4; // per client kind
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

type Send = (front: string, method: string, urlPath: string, headers: Record<string, string>, body?: string) => Promise<string>;

/** '200', another status, or 'agent <code> reused|fresh'. */
const viaAgent: Send = (front, method, urlPath, headers, body) =>
  new Promise((resolve) => {
    const req = http.request(front + urlPath, { method, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', (e: NodeJS.ErrnoException) => resolve(`agent ${e.code ?? e.message} in the answer`));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(`agent ${e.code ?? e.message} ${req.reusedSocket ? 'reused' : 'fresh'}`));
    req.end(body);
  });

/** '200', another status, or 'fetch <cause>'. */
const viaFetch: Send = async (front, method, urlPath, headers, body) => {
  try {
    const r = await fetch(front + urlPath, { method, headers, body });
    await r.arrayBuffer();
    return String(r.status);
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return `fetch ${cause?.code ?? cause?.message ?? (e as Error).message}`;
  }
};

async function main(): Promise<void> {
  const sep = process.argv.indexOf('--');
  const cycles = Number(process.argv[2]);
  const command = process.argv.slice(sep + 1);
  if (sep < 0 || !Number.isInteger(cycles) || cycles < 1 || command.length === 0) {
    throw new Error('usage: node dist/bench/cluster-restarts.js CYCLES -- COMMAND [ARGS...]');
  }
  const front = { url: process.env.TTSTORE_URL ?? '', serviceKey: process.env.TTSTORE_SERVICE_KEY ?? '' };
  if (!front.url || !front.serviceKey) throw new Error('TTSTORE_URL and TTSTORE_SERVICE_KEY: the exports of `scripts/cluster.sh start`');
  const kinds: Array<[string, Send]> = [
    ['agent', viaAgent],
    ['fetch', viaFetch],
  ];
  const perKind = GET_LOOPS + PUT_LOOPS;
  const tenants = await Promise.all(Array.from({ length: kinds.length * perKind }, () => createTenant(front)));
  await sleep(1000); // every node learns of the tenants
  const json = (t: CreatedTenant) => ({ ...tenantHeaders(t), 'content-type': 'application/json' });
  const put = (send: Send, t: CreatedTenant, key: string) =>
    send(front.url, 'POST', '/v1/put', json(t), JSON.stringify({ key, data_b64: Buffer.from(String(Math.random())).toString('base64') }));
  const first = await Promise.all(tenants.map((t) => put(viaFetch, t, 'r')));
  if (first.some((s) => s !== '200')) throw new Error(`the first puts: ${first.join(' ')}`);

  let done = false;
  let requests = 0;
  const failed = new Map<string, number>();
  const loop = async (one: () => Promise<string>) => {
    while (!done) {
      const outcome = await one();
      requests++;
      if (outcome !== '200') failed.set(outcome, (failed.get(outcome) ?? 0) + 1);
    }
  };
  const load = Promise.all(
    kinds.flatMap(([, send], k) =>
      tenants
        .slice(k * perKind, (k + 1) * perKind)
        .map((t, i) =>
          i < GET_LOOPS ? loop(() => send(front.url, 'GET', '/v1/get/default/r', tenantHeaders(t))) : loop(() => put(send, t, 'w')),
        ),
    ),
  );
  await sleep(1000);
  const ms: number[] = [];
  for (let c = 0; c < cycles; c++) {
    const started = performance.now();
    await promisify(execFile)(command[0]!, command.slice(1)); // async: the load runs on meanwhile
    ms.push(Math.round(performance.now() - started));
    await sleep(300);
  }
  done = true;
  await load;
  agent.destroy();
  console.log(`${cycles} x \`${command.join(' ')}\` (${ms.join(', ')} ms) under ${tenants.length} loops of gets and puts:`);
  console.log(`${requests} requests, ${[...failed.values()].reduce((a, b) => a + b, 0)} failed`);
  for (const [kind, n] of [...failed].sort((a, b) => b[1] - a[1])) console.log(`  ${n} ${kind}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
