// API keys and the service key: generation, hashing, constant-time comparison, and where a request
// carries them. Only SHA-256 digests of keys are ever kept.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';

/** CONTRACT.md section 1: `tts_` + 43 base64url characters (32 CSPRNG bytes). */
export const API_KEY_RE = /^tts_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return `tts_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 of the UTF-8 bytes of `value` (one-shot: no Hash object per request). */
export function sha256(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/** SHA-256 of the UTF-8 bytes of `value` as lowercase hex, the form the registry keys tenants by. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** Compare two SHA-256 digests without leaking where they differ. */
export function digestsEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('Authorization');
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m ? m[1]! : null;
}

/** The X-Api-Key header (trimmed), or null when absent or empty. */
export function apiKeyHeader(ctx: Context): string | null {
  const v = ctx.get('X-Api-Key').trim();
  return v === '' ? null : v;
}

/** The tenant key of a request: X-Api-Key wins over Authorization: Bearer (SPEC.md, Authentication 2). */
export function presentedTenantKey(ctx: Context): string | null {
  return apiKeyHeader(ctx) ?? bearerToken(ctx);
}
