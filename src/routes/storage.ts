// The storage routes of SPEC.md / CONTRACT.md section 6, each behind the gate's tenantGate
// (authenticate, rate limit); the handlers validate, call gate.authorize, then do the work.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import type { Engine } from '../engine/types.js';
import type { EntryService } from '../entries/service.js';
import { jsonLimitFor } from './storage-body.js';
import { putCoresBatchHandler, putCoresHandler, putHandler } from './storage-write.js';
import { deleteHandler, getHandler, listHandler, serveHandler } from './storage-read.js';

export interface StorageDeps {
  entries: EntryService;
  engine: Engine;
  config: Pick<Config, 'maxPayloadBytes'>;
  /** JSON body limit in bytes (admits data_b64 of the largest payload). */
  jsonLimit: number;
}

export function registerStorageRoutes(
  router: Router,
  opts: { tenantGate: Middleware; entries: EntryService; engine: Engine; config: Pick<Config, 'maxPayloadBytes'> },
): void {
  const deps: StorageDeps = { ...opts, jsonLimit: jsonLimitFor(opts.config.maxPayloadBytes) };
  const gate = opts.tenantGate;
  router.post('/v1/put', gate, putHandler(deps));
  router.post('/v1/put_cores', gate, putCoresHandler(deps));
  router.post('/v1/put_cores_batch', gate, putCoresBatchHandler(deps));
  router.get('/v1/get/:namespace/:key', gate, getHandler(deps));
  router.post('/v1/serve', gate, serveHandler(deps));
  router.delete('/v1/delete/:namespace/:key', gate, deleteHandler(deps));
  router.get('/v1/list/:namespace', gate, listHandler(deps));
}
