// Operator (the service key): tenants (create, rotate key, add namespace, change plan, deactivate),
// every tenant's usage, health and the main metrics. A new key is shown once and dropped when dismissed.
import { useState } from 'preact/hooks';
import { type Client, type Json } from '../api';
import { bytes, fmt } from '../plot';
import { Busy, ErrorNote, TableHead } from '../components';
import { useLoad } from '../load';
import { Meter, TenantUsage } from './usage';

const PLANS = ['starter', 'builder', 'pro', 'enterprise'];

function NewKey({ tenantId, apiKey, done }: { tenantId: string; apiKey: string; done: () => void }) {
  return (
    <div class="new-key" role="alert" data-testid="new-key">
      <p>
        The API key of <b>{tenantId}</b>, shown this once (only its hash is kept):
      </p>
      <p>
        <code data-testid="api-key">{apiKey}</code>
      </p>
      <button type="button" onClick={done} autofocus>
        I have copied it
      </button>
    </div>
  );
}

function TenantRow({
  api,
  t,
  changed,
  showKey,
}: {
  api: Client;
  t: Json;
  changed: () => void;
  showKey: (id: string, key: string) => void;
}) {
  const [ns, setNs] = useState('');
  const [plan, setPlan] = useState(t.plan);
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const act = (p: Promise<unknown>) => p.then(() => (setError(null), changed())).catch(setError);
  return (
    <tr data-tenant={t.tenant_id}>
      <th scope="row">{t.tenant_id}</th>
      <td>{t.active ? 'active' : 'deactivated'}</td>
      <td>
        <select
          aria-label={`plan of ${t.tenant_id}`}
          value={plan}
          onChange={(e) => setPlan((e.target as HTMLSelectElement).value)}
          disabled={!t.active}
        >
          {PLANS.map((p) => (
            <option key={p}>{p}</option>
          ))}
        </select>
        <button
          type="button"
          disabled={!t.active || plan === t.plan}
          onClick={() => act(api.post('/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan }))}
        >
          Change plan
        </button>
      </td>
      <td>
        {(t.namespaces as string[]).join(', ')}
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            act(api.post('/gate/onboard/add-namespace', { tenant_id: t.tenant_id, namespace: ns.trim() }).then(() => setNs('')));
          }}
        >
          <input
            aria-label={`new namespace for ${t.tenant_id}`}
            value={ns}
            onInput={(e) => setNs((e.target as HTMLInputElement).value)}
            disabled={!t.active}
            required
          />
          <button type="submit" disabled={!t.active}>
            Add namespace
          </button>
        </form>
      </td>
      <td>
        <button
          type="button"
          disabled={!t.active}
          onClick={() =>
            api
              .post('/gate/onboard/rotate-key', { tenant_id: t.tenant_id })
              .then((r) => showKey(t.tenant_id, r.api_key))
              .catch(setError)
          }
        >
          Rotate key
        </button>
        {t.active &&
          (confirm ? (
            <button type="button" class="danger" onClick={() => act(api.post('/gate/admin/deactivate', { tenant_id: t.tenant_id }))}>
              Confirm: deactivate {t.tenant_id}
            </button>
          ) : (
            <button type="button" onClick={() => setConfirm(true)}>
              Deactivate…
            </button>
          ))}
        <ErrorNote error={error} />
      </td>
    </tr>
  );
}

export function Tenants({ api }: { api: Client }) {
  const { data, error, reload } = useLoad(() => api.get<{ tenants: Json[] }>('/gate/admin/tenants'), []);
  const tenants = data?.tenants ?? null;
  const [formError, setFormError] = useState<unknown>(null);
  const [shown, setShown] = useState<{ id: string; key: string } | null>(null);
  const [id, setId] = useState('');
  const [plan, setPlan] = useState('starter');
  const [namespaces, setNamespaces] = useState('default');
  const [email, setEmail] = useState('');
  async function create(e: Event) {
    e.preventDefault();
    try {
      const body: Json = {
        tenant_id: id.trim(),
        plan,
        namespaces: namespaces
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      };
      if (email.trim()) body.email = email.trim();
      const r = await api.post('/gate/onboard/create', body);
      setShown({ id: r.tenant_id, key: r.api_key });
      setFormError(null);
      setId('');
      reload();
    } catch (err) {
      setFormError(err);
    }
  }
  return (
    <section aria-labelledby="tenants-title">
      <h2 id="tenants-title">Tenants</h2>
      {shown && <NewKey tenantId={shown.id} apiKey={shown.key} done={() => setShown(null)} />}
      <form class="row" onSubmit={create} data-testid="create-tenant">
        <label>
          Tenant id{' '}
          <input
            name="tenant_id"
            value={id}
            onInput={(e) => setId((e.target as HTMLInputElement).value)}
            required
            pattern="[a-z0-9][a-z0-9_\-]{1,62}"
          />
        </label>
        <label>
          Plan{' '}
          <select name="plan" value={plan} onChange={(e) => setPlan((e.target as HTMLSelectElement).value)}>
            {PLANS.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Namespaces (comma-separated){' '}
          <input name="namespaces" value={namespaces} onInput={(e) => setNamespaces((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Email <input name="email" type="email" value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Create tenant</button>
      </form>
      <ErrorNote error={formError} />
      <ErrorNote error={error} />
      <Busy when={!tenants && !error} />
      {tenants && (
        <table data-testid="tenants">
          <TableHead cols={['Tenant', 'State', 'Plan', 'Namespaces', 'Key and state']} />
          <tbody>
            {tenants.map((t) => (
              <TenantRow key={t.tenant_id} api={api} t={t} changed={reload} showKey={(tid, key) => setShown({ id: tid, key })} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function AllUsage({ api }: { api: Client }) {
  const { data: u, error } = useLoad(() => api.get('/gate/admin/usage'), []);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section aria-labelledby="all-usage-title">
      <h2 id="all-usage-title">Usage{u ? ` in ${u.period}` : ''}</h2>
      <ErrorNote error={error} />
      <Busy when={!u && !error} />
      {u && (
        <table data-testid="usage">
          <TableHead cols={['Tenant', 'CU against the monthly quota', 'Stored bytes against the storage quota']} />
          <tbody>
            {(u.tenants as Json[]).map((t) => {
              const sq = t.storage_quota_bytes === -1 ? null : t.storage_quota_bytes;
              return (
                <tr key={t.tenant_id}>
                  <th scope="row">
                    <button type="button" class="link" onClick={() => setOpen(t.tenant_id)}>
                      {t.tenant_id}
                    </button>
                    {t.active ? '' : ' (deactivated)'}
                  </th>
                  <td>
                    <Meter
                      compact
                      label={`CU of ${t.tenant_id}`}
                      used={t.cus_used}
                      limit={t.monthly_quota}
                      text={`${fmt(t.cus_used)} of ${fmt(t.monthly_quota)}`}
                    />
                  </td>
                  <td>
                    <Meter
                      compact
                      label={`stored bytes of ${t.tenant_id}`}
                      used={t.stored_bytes}
                      limit={sq}
                      text={`${bytes(t.stored_bytes)} of ${bytes(sq)}`}
                    />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {open && <TenantUsage api={api} tenantId={open} key={open} />}
    </section>
  );
}

/** The series the health view sums (all label sets of each), in this order. */
const MAIN_METRICS: [string, string, (v: number) => string][] = [
  ['ttstore_http_requests_total', 'HTTP requests', fmt],
  ['ttstore_gate_tenants', 'Tenants', fmt],
  ['ttstore_gate_cu_charged_total', 'CU charged', fmt],
  ['ttstore_gate_denied_total', 'Requests denied by the gate', fmt],
  ['ttstore_jobs_queued', 'Jobs queued', fmt],
  ['ttstore_jobs_running', 'Jobs running', fmt],
  ['ttstore_engine_requests_in_flight', 'Engine requests in flight', fmt],
  ['ttstore_inflight_bytes', 'Bytes held by requests in flight', bytes],
  ['ttstore_core_cache_hit_ratio', 'Core cache hit ratio', fmt],
  ['ttstore_sqlite_bytes', 'SQLite file', bytes],
  ['ttstore_blob_store_bytes', 'Blob store', bytes],
  ['ttstore_blob_store_files', 'Blob files', fmt],
  ['process_resident_memory_bytes', 'Resident memory', bytes],
];

/** Sums of each series by metric name from the Prometheus text format. */
export function sumSeries(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (m) sums.set(m[1], (sums.get(m[1]) ?? 0) + Number(m[3]));
  }
  return sums;
}

export function Health({ api }: { api: Client }) {
  const { data: health, error } = useLoad(() => api.get('/gate/health'), []);
  const { data: metrics, error: metricsError } = useLoad(async () => sumSeries(await api.text('/gate/metrics')), []);
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health and metrics</h2>
      <ErrorNote error={error} />
      <ErrorNote error={metricsError} />
      {health && (
        <dl class="facts" data-testid="health">
          <dt>Status</dt>
          <dd class={health.status}>{health.status}</dd>
          <dt>Version</dt>
          <dd>{health.version}</dd>
          <dt>Up for</dt>
          <dd>{fmt(health.uptime_s)} s</dd>
          <dt>Engine</dt>
          <dd>
            {health.engine.backend} ({health.engine.threads} threads, BLAS {health.engine.blas}, {health.engine.cuda_devices} CUDA devices)
          </dd>
          <dt>Database</dt>
          <dd>{health.db}</dd>
        </dl>
      )}
      {metrics && (
        <table data-testid="metrics">
          <caption>Main metrics (summed over their labels)</caption>
          <tbody>
            {MAIN_METRICS.filter(([name]) => metrics.has(name)).map(([name, label, show]) => (
              <tr key={name}>
                <th scope="row">{label}</th>
                <td>{show(metrics.get(name)!)}</td>
                <td>
                  <code>{name}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
