// When to retry and how long to wait: 429 and 503 are refused before any work (nothing stored, nothing
// charged), so any request may be sent again; waits grow exponentially with full jitter, never shorter
// than Retry-After, and a wait over the cap gives up rather than retry early into another refusal.
export interface RetryPolicy {
  /** Retries after the first attempt (default 5). */
  retries: number;
  /** First backoff step in ms (default 200). */
  baseMs: number;
  /** Longest single wait in ms (default 60000: a rate-limit window). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 5, baseMs: 200, maxDelayMs: 60_000 };

export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const n = Number(header);
  if (Number.isFinite(n)) return Math.max(0, n);
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : Math.max(0, (t - now) / 1000);
}

/** The wait before retry number `attempt` (0-based), or undefined to give up. */
export function backoffMs(policy: RetryPolicy, attempt: number, retryAfterS: number | undefined, random = Math.random): number | undefined {
  if (attempt >= policy.retries) return undefined;
  const jittered = random() * Math.min(policy.maxDelayMs, policy.baseMs * 2 ** attempt);
  const floor = retryAfterS === undefined ? 0 : retryAfterS * 1000;
  if (floor > policy.maxDelayMs) return undefined;
  return Math.min(policy.maxDelayMs, Math.max(floor, jittered));
}

/** Resolves after ms, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
