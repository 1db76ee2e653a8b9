// Who is signed in: the key lives in sessionStorage only (gone with the tab; never localStorage, never
// a cookie), and is sent only to this page's own origin (relative URLs; the CSP's connect-src 'self').
export type Role = 'tenant' | 'operator';

export interface Session {
  role: Role;
  key: string;
}

const KEY = 'ttstore.console.key';
const ROLE = 'ttstore.console.role';

export function loadSession(): Session | null {
  const key = sessionStorage.getItem(KEY);
  const role = sessionStorage.getItem(ROLE);
  return key && (role === 'tenant' || role === 'operator') ? { role, key } : null;
}

export function saveSession(s: Session): void {
  sessionStorage.setItem(KEY, s.key);
  sessionStorage.setItem(ROLE, s.role);
}

/** The namespace the tenant last opened (not a secret; kept beside the key, dropped with it). */
export const NAMESPACE = 'ttstore.console.namespace';

/** Signing out forgets everything the console kept in this tab. */
export function clearSession(): void {
  for (const k of [KEY, ROLE, NAMESPACE]) sessionStorage.removeItem(k);
}
