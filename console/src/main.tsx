// The ttstore console: sign in with a tenant's API key or the operator's service key, then the views of
// that role. The view is the URL's hash (#entries, #entry/<ns>/<key>, #jobs, ...), so Back works.
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import './style.css';
import { client, errorText, type Client } from './api';
import { clearSession, loadSession, NAMESPACE, saveSession, type Role, type Session } from './session';
import { Entries } from './views/entries';
import { EntryView } from './views/entry';
import { Jobs } from './views/jobs';
import { OwnUsage } from './views/usage';
import { AllUsage, Health, Tenants } from './views/operator';

const TABS: Record<Role, [string, string][]> = {
  tenant: [
    ['entries', 'Entries'],
    ['jobs', 'Simulations'],
    ['usage', 'Usage'],
  ],
  operator: [
    ['tenants', 'Tenants'],
    ['all-usage', 'Usage'],
    ['health', 'Health'],
  ],
};

function useHash(): [string[], (...parts: string[]) => void] {
  const read = () => location.hash.slice(1).split('/').map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const on = () => setParts(read());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return [parts, (...p) => (location.hash = p.map(encodeURIComponent).join('/'))];
}

function SignIn({ done }: { done: (s: Session) => void }) {
  const [role, setRole] = useState<Role>('tenant');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(e: Event) {
    e.preventDefault();
    const s: Session = { role, key: key.trim() };
    setBusy(true);
    try {
      // One cheap call that only this role's key passes.
      await client(s).get(role === 'tenant' ? '/v1/simulation/list?limit=1' : '/gate/admin/tenants');
      saveSession(s);
      done(s);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }
  return (
    <main id="main" class="signin">
      <h1>ttstore console</h1>
      <form onSubmit={submit} data-testid="signin">
        <fieldset>
          <legend>Sign in as</legend>
          <label>
            <input type="radio" name="role" value="tenant" checked={role === 'tenant'} onChange={() => setRole('tenant')} /> a tenant (API
            key <code>tts_…</code>)
          </label>
          <label>
            <input type="radio" name="role" value="operator" checked={role === 'operator'} onChange={() => setRole('operator')} /> the
            operator (service key)
          </label>
        </fieldset>
        <label for="key">Key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          required
          autofocus
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <p class="hint">The key stays in this tab (sessionStorage) and goes only to this server. Closing the tab signs you out.</p>
      </form>
    </main>
  );
}

function Shell({ api, signOut }: { api: Client; signOut: () => void }) {
  const role = api.session.role;
  const [route, go] = useHash();
  const [namespace, setNs] = useState(() => sessionStorage.getItem(NAMESPACE) ?? 'default');
  const setNamespace = (ns: string) => {
    sessionStorage.setItem(NAMESPACE, ns);
    setNs(ns);
  };
  const tabs = TABS[role];
  const view = tabs.some(([id]) => id === route[0]) || (role === 'tenant' && route[0] === 'entry') ? route[0] : tabs[0][0];
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    // A new view moves focus to its heading, so a screen reader announces it.
    const h = main.current?.querySelector('h2');
    if (h) {
      h.tabIndex = -1;
      h.focus();
    }
  }, [route.join('/')]);
  const openEntry = (ns: string, key: string) => {
    setNamespace(ns);
    go('entry', ns, key);
  };
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header>
        <h1>ttstore console</h1>
        <nav aria-label="Views">
          {tabs.map(([id, label]) => (
            <a key={id} href={`#${id}`} aria-current={view === id || (id === 'entries' && view === 'entry') ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who">{role === 'tenant' ? 'tenant' : 'operator'}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {view === 'entries' && (
          <Entries api={api} namespace={namespace} setNamespace={setNamespace} open={(key) => openEntry(namespace, key)} />
        )}
        {view === 'entry' && (
          <EntryView
            key={route.join('/')}
            api={api}
            namespace={route[1] ?? namespace}
            entryKey={route.slice(2).join('/')}
            back={() => go('entries')}
            open={(key) => openEntry(route[1] ?? namespace, key)}
          />
        )}
        {view === 'jobs' && <Jobs api={api} namespace={namespace} openOutput={openEntry} />}
        {view === 'usage' && <OwnUsage api={api} />}
        {view === 'tenants' && <Tenants api={api} />}
        {view === 'all-usage' && <AllUsage api={api} />}
        {view === 'health' && <Health api={api} />}
      </main>
    </>
  );
}

function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const api = useMemo(() => (session ? client(session) : null), [session]);
  if (!api) return <SignIn done={setSession} />;
  return (
    <Shell
      api={api}
      signOut={() => {
        clearSession();
        location.hash = '';
        setSession(null);
      }}
    />
  );
}

render(<App />, document.getElementById('app')!);
