// The storage routes of SPEC.md / CONTRACT.md section 6, each mounted from its description in
// ./endpoints.ts behind the gate's tenantGate (authenticate, rate limit); the handlers validate,
// call gate.authorize, then do the work.
import type { Api } from '../../http/endpoint.js';
import { STORAGE_ENDPOINTS as EP } from './endpoints.js';
import type { Config } from '../../config.js';
import type { Engine } from '../../engine/types.js';
import type { EntryService } from '../../entries/service.js';
import type { BufferPool } from '../../runtime/buffer-pool.js';
import type { RouteAdmission } from '../../http/admission.js';
import { putCoresBatchHandler, putCoresHandler, putHandler } from './write.js';
import { deleteHandler, getHandler, listHandler, serveHandler } from './read.js';

export interface StorageDeps {
  entries: EntryService;
  engine: Engine;
  config: Pick<Config, 'maxPayloadBytes' | 'compressionThresholdBytes'>;
  /** Large binary bodies and dense serve outputs, reused across requests. */
  buffers: BufferPool;
  /** Engine requests in flight per tenant, engine turns, and the bytes requests hold. */
  admission: RouteAdmission;
}

export function registerStorageRoutes(api: Api, deps: StorageDeps): void {
  api.mount(EP.put, putHandler(deps));
  api.mount(EP.put_cores, putCoresHandler(deps));
  api.mount(EP.put_cores_batch, putCoresBatchHandler(deps));
  api.mount(EP.get, getHandler(deps));
  api.mount(EP.serve, serveHandler(deps));
  api.mount(EP.delete, deleteHandler(deps));
  api.mount(EP.list, listHandler(deps));
}
