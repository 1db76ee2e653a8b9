// Usage: a tenant's CU this month by operation against its quota and its stored bytes against its
// storage quota, as bars: the operator reads any tenant's record (GET /gate/admin/usage/{id}), a
// signed-in tenant its own (GET /v1/usage, the same record), beside the rate-limit window its last
// answer reported.
import { enc, rateLimit, type Client, type Json } from '../api';
import { bytes, fmt } from '../plot';
import { Busy, ErrorNote, TableHead } from '../components';
import { useLoad } from '../load';

/** A used-against-limit bar; `compact` keeps its label for screen readers only (a table's header says it). */
export function Meter({
  label,
  used,
  limit,
  text,
  compact = false,
}: {
  label: string;
  used: number;
  limit: number | null;
  text: string;
  compact?: boolean;
}) {
  return (
    <div class="meter">
      <span class={compact ? 'sr-only' : undefined}>{label}</span>
      {limit !== null && limit > 0 ? (
        <meter min={0} max={limit} value={used} high={limit * 0.8} optimum={0} aria-label={label} />
      ) : (
        <span>(unlimited)</span>
      )}
      <span>{text}</span>
    </div>
  );
}

/** One usage record (the same shape from either endpoint) as bars. */
function UsageRecord({ u, testId }: { u: Json; testId: string }) {
  const storageQuota = u.storage_quota_bytes === -1 ? null : u.storage_quota_bytes;
  return (
    <div data-testid={testId}>
      <h3>
        {u.tenant_id} in {u.period}
      </h3>
      <Meter label="CU this month" used={u.cus_used} limit={u.monthly_quota} text={`${fmt(u.cus_used)} of ${fmt(u.monthly_quota)} CU`} />
      <Meter label="Stored bytes" used={u.stored_bytes} limit={storageQuota} text={`${bytes(u.stored_bytes)} of ${bytes(storageQuota)}`} />
      <table>
        <caption>CU by operation</caption>
        <TableHead cols={['Operation', 'CU', 'Share of the quota']} />
        <tbody>
          {Object.entries(u.breakdown as Record<string, number>).map(([op, cu]) => (
            <tr key={op} data-op={op}>
              <td>{op}</td>
              <td>{fmt(cu)}</td>
              <td>
                <meter min={0} max={u.monthly_quota || 1} value={cu} aria-label={`${op}: ${fmt(cu)} CU`} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function TenantUsage({ api, tenantId }: { api: Client; tenantId: string }) {
  const { data: u, error } = useLoad<Json>(() => api.get(`/gate/admin/usage/${enc(tenantId)}`), [tenantId]);
  if (error) return <ErrorNote error={error} />;
  if (!u) return <Busy when />;
  return <UsageRecord u={u} testId="tenant-usage" />;
}

export function OwnUsage({ api }: { api: Client }) {
  const { data: u, error } = useLoad<Json>(() => api.get('/v1/usage'), []);
  const seen = Number.isFinite(rateLimit.limit);
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <ErrorNote error={error} />
      {u ? <UsageRecord u={u} testId="own-usage" /> : <Busy when={!error} />}
      {seen && (
        <Meter
          label="Requests left in this rate-limit window"
          used={rateLimit.remaining}
          limit={rateLimit.limit}
          text={`${rateLimit.remaining} of ${rateLimit.limit}, window resets in ${Math.max(0, Math.ceil(rateLimit.reset - Date.now() / 1000))} s`}
        />
      )}
    </section>
  );
}
