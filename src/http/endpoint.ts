// One description per route: method, path, auth, parameters, body schema and answers. The router is
// built from these descriptions (mount) and so is the OpenAPI document (src/http/openapi.ts), so the
// two cannot drift: a route exists only through its description.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Operation } from '../gate/operations.js';
import type { BodyLimit } from '../limits/input.js';
import type { ObjectSchema, Schema } from './schema/types.js';

/** tenant: an API key (X-Api-Key or Bearer); admin: the service key as Bearer; none: open. */
export type Auth = 'tenant' | 'admin' | 'none';

export interface Answer {
  description: string;
  /** JSON body (application/json); absent: no body or a non-JSON one given in `content`. */
  schema?: Schema;
  /** Other media types of this answer (e.g. application/x-npy). */
  content?: Record<string, { description?: string }>;
  headers?: Record<string, string>;
}

export interface Endpoint {
  /** operationId, unique. */
  id: string;
  method: 'get' | 'post' | 'delete';
  /** OpenAPI path template, e.g. /v1/get/{namespace}/{key}. */
  path: string;
  summary: string;
  description?: string;
  tag: 'storage' | 'query' | 'simulation' | 'account' | 'admin' | 'operations';
  auth: Auth;
  /**
   * The metered operations a 2xx is charged as (tenant endpoints): their CU are written once, in
   * src/gate/operations.ts; several where the request picks one (serve's target).
   */
  operations?: readonly Operation[];
  pathParams?: Record<string, Schema>;
  query?: Record<string, Schema>;
  body?: {
    json?: ObjectSchema;
    /**
     * The JSON body's byte limit (src/limits/input.ts): 'small' for a body without array data,
     * 'payload' for one that carries data_b64. Larger: 413 before the body is read.
     */
    limit: BodyLimit;
    /** Raw body forms beside (or instead of) JSON. */
    raw?: Record<string, string>;
    required?: boolean;
  };
  /**
   * An engine request (compress, reconstruct, similarity, top-K): counted against its tenant's
   * SVC_GATE_TENANT_INFLIGHT before its body is read, its engine work run in the tenant's fair turns.
   */
  engine?: boolean;
  /** Success answers by status. */
  answers: Record<number, Answer>;
  /** Problem statuses this route can answer (problem+json), beyond the ones its auth implies. */
  problems?: number[];
}

/** Koa path of an OpenAPI template: {name} -> :name. */
export function koaPath(template: string): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

export interface Gates {
  tenant: Middleware;
  admin: Middleware;
}

/**
 * What runs between the gate and an endpoint's handlers, made from its description: the in-flight
 * count of an engine request, the reader (or refusal) of its body.
 */
export type RoutePrelude = (ep: Endpoint) => Middleware[];

/**
 * Registers described endpoints on a router, each behind the gate its `auth` names, then its prelude:
 * authentication and the rate limit come before any byte of the body is read.
 */
export class Api {
  constructor(
    readonly router: Router,
    private readonly gates: Gates,
    private readonly prelude: RoutePrelude,
  ) {}

  mount(ep: Endpoint, ...handlers: Middleware[]): void {
    const own = [...this.prelude(ep), ...handlers];
    const chain = ep.auth === 'tenant' ? [this.gates.tenant, ...own] : ep.auth === 'admin' ? [this.gates.admin, ...own] : own;
    const path = koaPath(ep.path);
    if (ep.method === 'get') this.router.get(ep.id, path, ...chain);
    else if (ep.method === 'post') this.router.post(ep.id, path, ...chain);
    else this.router.delete(ep.id, path, ...chain);
  }
}
