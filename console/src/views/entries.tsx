// Tenant: the keys of a namespace (latest versions), filtered by prefix, a page at a time. The namespace
// is picked from the key's own (GET /v1/namespaces), or typed when that list is empty.
import { useEffect, useState } from 'preact/hooks';
import { enc, type Client } from '../api';
import { bytes } from '../plot';
import { Busy, ErrorNote, TableHead } from '../components';
import { useLoad } from '../load';

const PAGE = 50;

interface Listed {
  key: string;
  version: number;
  created_at: number;
  verdict: string;
  compressed: boolean;
  original_bytes: number;
  stored_core_bytes: number;
}

export function Entries({
  api,
  namespace,
  setNamespace,
  open,
}: {
  api: Client;
  namespace: string;
  setNamespace: (ns: string) => void;
  open: (key: string) => void;
}) {
  const [ns, setNs] = useState(namespace);
  const [prefix, setPrefix] = useState('');
  const [offset, setOffset] = useState(0);
  const { data: owned } = useLoad(() => api.get<{ namespaces: { namespace: string }[] }>('/v1/namespaces'), []);
  const names = owned?.namespaces.map((n) => n.namespace) ?? [];
  const choose = (next: string) => {
    setOffset(0);
    setNs(next);
    setNamespace(next);
  };
  // A namespace outside the key's own would only be refused (403): start at its first one instead.
  useEffect(() => {
    if (names.length > 0 && !names.includes(namespace)) choose(names[0]!);
  }, [owned]);
  const {
    data: page,
    error,
    busy,
  } = useLoad(
    () => api.get<{ keys: Listed[]; total: number }>(`/v1/list/${enc(namespace)}?prefix=${enc(prefix)}&limit=${PAGE}&offset=${offset}`),
    [namespace, prefix, offset],
  );
  return (
    <section aria-labelledby="entries-title">
      <h2 id="entries-title">Entries</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setNamespace(ns.trim() || 'default');
        }}
      >
        {names.length > 0 ? (
          <label>
            Namespace{' '}
            <select name="namespace" value={namespace} onChange={(e) => choose((e.target as HTMLSelectElement).value)}>
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <>
            <label>
              Namespace <input name="namespace" value={ns} onInput={(e) => setNs((e.target as HTMLInputElement).value)} required />
            </label>
            <button type="submit">Open namespace</button>
          </>
        )}
        <label>
          Key prefix{' '}
          <input
            name="prefix"
            value={prefix}
            onInput={(e) => {
              setOffset(0);
              setPrefix((e.target as HTMLInputElement).value);
            }}
          />
        </label>
      </form>
      <ErrorNote error={error} />
      <Busy when={busy && !page} />
      {page && (
        <>
          <p>
            {page.total === 0
              ? 'No keys here yet.'
              : `Keys ${offset + 1}–${offset + page.keys.length} of ${page.total} in ${namespace}${prefix ? ` starting with “${prefix}”` : ''}.`}
          </p>
          <table data-testid="entries">
            <TableHead cols={['Key', 'Version', 'Verdict', 'Stored', 'Original', 'Created']} />
            <tbody>
              {page.keys.map((k) => (
                <tr key={k.key}>
                  <td>
                    <a
                      href={`#entry/${enc(namespace)}/${enc(k.key)}`}
                      onClick={(e) => {
                        e.preventDefault();
                        open(k.key);
                      }}
                    >
                      {k.key}
                    </a>
                  </td>
                  <td>{k.version}</td>
                  <td>
                    <span class={`verdict ${k.verdict}`}>{k.verdict}</span>
                  </td>
                  <td>{bytes(k.stored_core_bytes)}</td>
                  <td>{bytes(k.original_bytes)}</td>
                  <td>{new Date(k.created_at * 1000).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="row">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Previous page
            </button>
            <button type="button" disabled={offset + PAGE >= page.total} onClick={() => setOffset(offset + PAGE)}>
              Next page
            </button>
          </div>
        </>
      )}
    </section>
  );
}
