// Tenant: one entry: its versions, fingerprint, verdict, ratio, stored bytes, ranks as bars, metadata,
// its picture, and its nearest neighbours (top-K) as thumbnails with scores.
import { useEffect, useState } from 'preact/hooks';
import { enc, type Client, type Json } from '../api';
import { bytes, fmt } from '../plot';
import { Bars, Busy, ErrorNote, Picture } from '../components';
import { THUMB_CELLS } from '../part';
import { useLoad } from '../load';

export function EntryView({
  api,
  namespace,
  entryKey,
  back,
  open,
}: {
  api: Client;
  namespace: string;
  entryKey: string;
  back: () => void;
  open: (key: string) => void;
}) {
  const [latest, setLatest] = useState<number | null>(null);
  const [version, setVersion] = useState<number | undefined>(undefined);
  const { data: info, error } = useLoad<Json>(
    () => api.get(`/v1/get/${enc(namespace)}/${enc(entryKey)}${version ? `?version=${version}` : ''}`),
    [namespace, entryKey, version],
  );
  useEffect(() => {
    if (info && version === undefined) setLatest(info.version);
  }, [info]);
  return (
    <section aria-labelledby="entry-title">
      <p>
        <button type="button" onClick={back}>
          ← Back to {namespace}
        </button>
      </p>
      <h2 id="entry-title">
        {namespace} / {entryKey}
      </h2>
      <ErrorNote error={error} />
      <Busy when={!info && !error} />
      {info && (
        <>
          {latest !== null && latest > 1 && (
            <label>
              Version{' '}
              <select value={info.version} onChange={(e) => setVersion(Number((e.target as HTMLSelectElement).value))}>
                {Array.from({ length: latest }, (_, i) => latest - i).map((v) => (
                  <option value={v} key={v}>
                    {v}
                    {v === latest ? ' (latest)' : ''}
                  </option>
                ))}
              </select>
            </label>
          )}
          <dl class="facts" data-testid="entry-facts">
            <dt>Version</dt>
            <dd>{info.version}</dd>
            <dt>Kind</dt>
            <dd>
              {info.kind} {info.dtype} [{(info.shape as number[]).join(', ')}]
            </dd>
            <dt>Verdict</dt>
            <dd>
              <span class={`verdict ${info.verdict}`}>{info.verdict}</span> (tolerance {fmt(info.tolerance)}, domain {info.domain})
            </dd>
            <dt>Fingerprint</dt>
            <dd>
              relative {fmt(info.fingerprint?.relative_error)}, max abs {fmt(info.fingerprint?.max_abs_error)}, Frobenius{' '}
              {fmt(info.fingerprint?.frobenius_error)}
            </dd>
            <dt>Compression ratio</dt>
            <dd>{fmt(info.compression_ratio)}×</dd>
            <dt>Stored bytes</dt>
            <dd>
              {bytes(info.stored_core_bytes)} of {bytes(info.original_bytes)} (
              {info.compressed ? `${info.n_cores} cores, layout ${info.layout}` : 'stored as it is'})
            </dd>
            <dt>Created</dt>
            <dd>{new Date(info.created_at * 1000).toLocaleString()}</dd>
          </dl>
          <h3>Picture</h3>
          <Picture api={api} entry={{ namespace, key: entryKey, version: info.version }} info={{ kind: info.kind, shape: info.shape }} />
          {(info.ranks as number[]).length > 0 && (
            <>
              <h3>Ranks (r_0 … r_d, one bar per bond)</h3>
              <Bars values={info.ranks} label="Ranks of the train" />
            </>
          )}
          <h3>Metadata</h3>
          <pre class="metadata">{JSON.stringify(info.metadata ?? {}, null, 2)}</pre>
          {info.kind === 'array' && <Similar api={api} namespace={namespace} entryKey={entryKey} open={open} />}
        </>
      )}
    </section>
  );
}

function Similar({ api, namespace, entryKey, open }: { api: Client; namespace: string; entryKey: string; open: (key: string) => void }) {
  const [k, setK] = useState(6);
  const [metric, setMetric] = useState('cosine');
  const [results, setResults] = useState<[string, number][] | null>(null);
  const [infos, setInfos] = useState<Record<string, Json>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function find(e: Event) {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await api.post<{ results: [string, number][] }>('/v1/query/topk', { namespace, query_key: entryKey, k, metric });
      setResults(r.results);
      setError(null);
      const got: Record<string, Json> = {};
      await Promise.all(r.results.map(async ([key]) => (got[key] = await api.get(`/v1/get/${enc(namespace)}/${enc(key)}`))));
      setInfos(got);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="similar-title">
      <h3 id="similar-title">Similar entries</h3>
      <form class="row" onSubmit={find}>
        <label>
          How many <input type="number" min={1} max={24} value={k} onInput={(e) => setK(Number((e.target as HTMLInputElement).value))} />
        </label>
        <label>
          Metric{' '}
          <select value={metric} onChange={(e) => setMetric((e.target as HTMLSelectElement).value)}>
            <option value="cosine">cosine (larger is closer)</option>
            <option value="euclidean">euclidean (smaller is closer)</option>
            <option value="dot">dot (larger is closer)</option>
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Find similar
        </button>
      </form>
      <ErrorNote error={error} />
      {results && results.length === 0 && <p>No comparable entry (same shape) in {namespace}.</p>}
      {results && (
        <ul class="thumbs" data-testid="neighbours">
          {results.map(([key, score]) => (
            <li key={key}>
              <a
                href={`#entry/${enc(namespace)}/${enc(key)}`}
                onClick={(e) => {
                  e.preventDefault();
                  open(key);
                }}
              >
                {key}
              </a>
              <span class="score">score {fmt(score)}</span>
              {infos[key] && (
                <Picture
                  api={api}
                  entry={{ namespace, key }}
                  info={{ kind: infos[key].kind, shape: infos[key].shape }}
                  cells={THUMB_CELLS}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
