// The Koa application: request id, log line and metrics -> problem+json boundary (and 404/405) -> routes.
// Two app-level middlewares, not four: each async layer costs every request a promise and a frame.
// Everything route-specific (the gate, body parsing, validation) sits on the routes themselves, so
// an unknown path or method is answered before any authentication (CONTRACT.md section 4).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import Koa, { type Context, type Next } from 'koa';
import type Router from '@koa/router';
import { ProblemError, problemHandler, renderProblem } from './errors.js';
import { requestLog, type Logger, type RequestLog } from '../runtime/log.js';
import { dispatch } from './dispatch.js';
import { UNREAD_BODY_DRAIN_BYTES, UNREAD_BODY_LINGER_MS } from '../limits/input.js';
import type { HttpMetrics } from '../metrics/registry.js';
import { counterSeries } from '../metrics/series.js';
import { requestHasBody } from './body.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Ids for requests that bring none: UUID-shaped (8-4-4-4-12 hex digits), a random prefix per process
 * and a counter in the last group, so unique without drawing and formatting 16 random bytes per
 * request. They name a request in the log and the response; they are not secrets.
 */
export function requestIdSource(): () => string {
  const prefix = randomUUID().slice(0, 24);
  let n = 0;
  return () => {
    n = n === 0xffffffffffff ? 0 : n + 1;
    return prefix + n.toString(16).padStart(12, '0');
  };
}

interface RequestSeries {
  inc(): void;
  observe(seconds: number): void;
}

/**
 * The request counter and latency histogram of one (method, route, status), resolved once (series.ts:
 * an addition per request); the set of routes, methods and statuses is small.
 */
function seriesCache(metrics: HttpMetrics): (method: string, route: string, status: number) => RequestSeries {
  // route -> status -> method: three map lookups, no key string built per request
  const cache = new Map<string, Map<number, Map<string, RequestSeries>>>();
  return (method, route, status) => {
    let byStatus = cache.get(route);
    if (!byStatus) cache.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (!byMethod) byStatus.set(status, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (!s) {
      const labels = { method, route, status: String(status) };
      const counter = counterSeries(metrics.requests, labels);
      const histogram = metrics.duration.labels(labels);
      s = { inc: () => counter.inc(), observe: (v) => histogram.observe(v) };
      byMethod.set(method, s);
    }
    return s;
  };
}

/**
 * The request id (X-Request-Id, echoed or generated), one log line and one metrics observation per
 * request. The route label is the matched template
 * (`/v1/get/:namespace/:key`), never the raw path, so keys and tenants cannot become label values.
 */
function logRequests(log: RequestLog, metrics: HttpMetrics | undefined, closing: () => boolean) {
  const series = metrics ? seriesCache(metrics) : null;
  const nextId = requestIdSource();
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : nextId();
    ctx.res.setHeader('X-Request-Id', ctx.state.requestId); // (ctx.set allocates arrays per call)
    const started = performance.now(); // (hrtime.bigint() allocates a BigInt per reading)
    try {
      await next();
    } finally {
      // While shutting down, every response closes its connection: keep-alive clients then reconnect
      // (and are refused) instead of holding the server open until its grace period runs out. So does
      // an answer that leaves a long body unread (a 401, 413 or 415 before reading it).
      if (unreadBodyTooLong(ctx.req)) {
        ctx.set('Connection', 'close');
        lingerBeforeClosing(ctx.req);
      } else if (closing()) {
        ctx.set('Connection', 'close');
      }
      const ms = performance.now() - started;
      if (series) {
        const s = series(ctx.method, ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched', ctx.status);
        s.inc();
        s.observe(ms / 1000);
      }
      log.write({
        requestId: ctx.state.requestId,
        tenantId: ctx.state.tenant?.tenantId,
        method: ctx.method,
        route: ctx._matchedRoute ? String(ctx._matchedRoute) : null,
        status: ctx.status,
        durationMs: Math.round(ms * 1000) / 1000,
        cu: ctx.state.cuCharged ?? 0,
      });
    }
  };
}

/**
 * True when the answer leaves part of a chunked body, or of one declared longer than
 * UNREAD_BODY_DRAIN_BYTES, unread: Node would read the rest, however long, and drop it to reuse the
 * connection; it is closed instead. A shorter body is still dropped that way, so that clients which
 * write the whole body before reading the answer (fetch) get the answer, not a broken pipe.
 */
function unreadBodyTooLong(req: IncomingMessage): boolean {
  if (req.complete || !requestHasBody(req)) return false;
  const declared = req.headers['content-length'];
  return declared === undefined || Number(declared) > UNREAD_BODY_DRAIN_BYTES;
}

/**
 * Ends a connection that leaves request bytes unread the way HTTP/1.1 servers do (a lingering close):
 * after the answer, what the client still sends is dropped for at most UNREAD_BODY_LINGER_MS, or until
 * the client ends its side. Closing at once with unread bytes sends a TCP reset: a client still writing
 * its body would see a broken pipe and might never read the 4xx that explains why.
 */
export function lingerThenDestroy(socket: Duplex): void {
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), UNREAD_BODY_LINGER_MS);
  timer.unref();
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(timer));
}

/** Node's HTTP server calls destroySoon after a `Connection: close` answer; this one lingers first. */
function lingerBeforeClosing(req: IncomingMessage): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (!socket || socket.destroyed) return;
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.writable) this.end();
    req.resume();
    lingerThenDestroy(this);
  };
}

/** 404 or 405 (with Allow) as problems, for a request no route answered. */
function answerUnmatched(ctx: Context): void {
  if (ctx.body !== undefined && ctx.body !== null) return;
  if (ctx.status === 405) {
    const allow = ctx.response.get('Allow');
    renderProblem(
      ctx,
      new ProblemError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, {}, { Allow: allow }),
    );
  } else if (ctx.status === 404) {
    renderProblem(ctx, new ProblemError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`));
  }
}

export interface AppOptions {
  log: Logger;
  router: Router;
  metrics?: HttpMetrics;
  /** True once shutdown began. */
  closing?: () => boolean;
}

export function createApp({ log, router, metrics, closing = () => false }: AppOptions): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by problemHandler, once
  app.use(logRequests(requestLog(log), metrics, closing));
  app.use(problemHandler(log, answerUnmatched));
  app.use(dispatch(router)); // router.routes(), without its per-request matching and composing
  app.use(router.allowedMethods());
  return app;
}
