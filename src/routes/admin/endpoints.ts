// The admin and onboarding endpoints (CONTRACT.md section 6's table): tenants, keys, plans and usage.
import { PLANS } from '../../gate/context.js';
import { BREAKDOWN_KEYS } from '../../gate/operations.js';
import { PERIOD_RE } from '../../gate/meter.js';
import { NAMESPACE_RE } from '../../entries/identifiers.js';
import { badRequest } from '../../http/errors.js';
import { s } from '../../http/schema/types.js';
import type { Endpoint } from '../../http/endpoint.js';
import { MAX_MONTHLY_QUOTA, MAX_NAMESPACES, MAX_RATE_LIMIT_REQUESTS, MAX_RATE_LIMIT_WINDOW_S } from '../../limits/input.js';

export const TENANT_ID_RE = /^[a-z0-9][a-z0-9_-]{1,62}$/;
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

const tenantId = s.string({ pattern: TENANT_ID_RE, description: 'Tenant identifier (CONTRACT.md section 1).' });
const namespaceName = s.string({ pattern: NAMESPACE_RE });
const plan = s.enum(PLANS);
const rateLimit = s.object(
  {
    requests: s.integer(1, MAX_RATE_LIMIT_REQUESTS),
    window_s: s.integer(1, MAX_RATE_LIMIT_WINDOW_S),
  },
  { required: ['requests', 'window_s'], description: 'Custom limit (plan enterprise only).' },
);
const monthlyQuota = s.number({
  minimum: 0,
  maximum: MAX_MONTHLY_QUOTA,
  description: 'Custom monthly quota in CU (plan enterprise only).',
});
const storageQuotaBytes = s.integer(0, Number.MAX_SAFE_INTEGER, {
  description:
    'Custom storage quota in bytes (plan enterprise only; absent: SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES). ' +
    'Counts the bytes stored for live and deleted-but-unpurged versions (core bytes, or data bytes when uncompressed).',
});

export const createBody = s.object(
  {
    tenant_id: tenantId,
    plan: s.enum(PLANS, { docDefault: 'starter' }),
    namespaces: s.array(namespaceName, {
      minItems: 1,
      maxItems: MAX_NAMESPACES,
      itemsText: 'namespace names',
      docDefault: ['default'],
      refine: (v) => [...new Set(v)],
    }),
    email: s.string({
      maxLength: 254,
      pattern: EMAIL_RE,
      description: 'Contact address.',
      invalid: (_v, field) => badRequest('email must be an email address', { field }),
    }),
    rate_limit: rateLimit,
    monthly_quota: monthlyQuota,
    storage_quota_bytes: storageQuotaBytes,
  },
  { required: ['tenant_id'], title: 'CreateTenantRequest' },
);

export const tenantOnlyBody = s.object({ tenant_id: tenantId }, { required: ['tenant_id'] });
export const addNamespaceBody = s.object({ tenant_id: tenantId, namespace: namespaceName }, { required: ['tenant_id', 'namespace'] });
export const updateTierBody = s.object(
  {
    tenant_id: tenantId,
    plan,
    rate_limit: rateLimit,
    monthly_quota: monthlyQuota,
    storage_quota_bytes: storageQuotaBytes,
  },
  { required: ['tenant_id', 'plan'], title: 'UpdateTierRequest' },
);
export const reloadBody = s.object({});
export const periodQuery = {
  period: s.string({
    pattern: PERIOD_RE,
    description: 'A month, YYYY-MM (default: the current UTC month).',
    invalid: (_v, field) => badRequest('period must be a month shaped like YYYY-MM', { field }),
  }),
};

/** A storage quota in a response: bytes, or null for unlimited. */
const storageQuotaShown = s.any({
  description:
    'Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, ' +
    'enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited).',
});
const limits = {
  monthly_quota: s.number(),
  rate_limit: s.object({ requests: s.integer(1, MAX_RATE_LIMIT_REQUESTS), window_s: s.integer(1, MAX_RATE_LIMIT_WINDOW_S) }),
  storage_quota_bytes: storageQuotaShown,
};
const tenant = s.object(
  {
    tenant_id: s.string(),
    plan,
    namespaces: s.array(s.string()),
    active: s.boolean(),
    email: s.string(),
    ...limits,
    created_at: s.number(),
    deactivated_at: s.number(),
    purge_after: s.number(),
  },
  { title: 'Tenant' },
);
const usage = {
  cus_used: s.number({ description: 'CU used in the period: an exact sum of thousandths of a CU.' }),
  monthly_quota: s.number(),
  utilization: s.number(),
  stored_bytes: s.integer(0, Number.MAX_SAFE_INTEGER, {
    description:
      'Bytes stored now (whatever the period asked): live and deleted-but-unpurged versions, ' +
      'core bytes or data bytes when uncompressed, simulation outputs included.',
  }),
  storage_quota_bytes: storageQuotaShown,
};

/** One tenant's usage record in a period, by operation: the admin's answer for a tenant and the tenant's own. */
export const tenantUsage = s.object(
  {
    tenant_id: s.string(),
    period: s.string(),
    ...usage,
    breakdown: s.object(Object.fromEntries(BREAKDOWN_KEYS.map((k) => [k, s.number()]))),
  },
  { title: 'TenantUsage' },
);

const ADMIN = 'admin';
const BODY_ERRORS = [400, 413, 415];

export const ADMIN_ENDPOINTS = {
  create_tenant: {
    id: 'create_tenant',
    method: 'post',
    path: '/gate/onboard/create',
    tag: ADMIN,
    auth: 'admin',
    summary: 'Create a tenant and issue its API key (shown once)',
    body: { json: createBody, limit: 'small', required: true },
    answers: {
      201: {
        description: 'Created.',
        schema: s.object({ ...tenant.properties, api_key: s.string({ description: 'tts_ + 43 base64url characters; shown once.' }) }),
      },
    },
    problems: [...BODY_ERRORS, 409],
  },
  rotate_key: {
    id: 'rotate_key',
    method: 'post',
    path: '/gate/onboard/rotate-key',
    tag: ADMIN,
    auth: 'admin',
    summary: "Replace a tenant's API key (the old one stops working at once)",
    body: { json: tenantOnlyBody, limit: 'small', required: true },
    answers: {
      200: { description: 'The new key.', schema: s.object({ tenant_id: s.string(), api_key: s.string(), rotated_at: s.number() }) },
    },
    problems: [...BODY_ERRORS, 404],
  },
  add_namespace: {
    id: 'add_namespace',
    method: 'post',
    path: '/gate/onboard/add-namespace',
    tag: ADMIN,
    auth: 'admin',
    summary: "Add a namespace to a tenant's ACL (a no-op when present)",
    body: { json: addNamespaceBody, limit: 'small', required: true },
    answers: { 200: { description: 'The ACL.', schema: s.object({ tenant_id: s.string(), namespaces: s.array(s.string()) }) } },
    problems: [...BODY_ERRORS, 404],
  },
  update_tier: {
    id: 'update_tier',
    method: 'post',
    path: '/gate/onboard/update-tier',
    tag: ADMIN,
    auth: 'admin',
    summary: "Change a tenant's plan (and custom limits, enterprise only)",
    description:
      'rate_limit, monthly_quota and storage_quota_bytes are enterprise terms (400 with another plan); ' +
      'a field left out follows the SVC_GATE_* default. A storage quota below the bytes already stored refuses further ' +
      'writes (402 storage_quota_exceeded) until deletes are purged.',
    body: { json: updateTierBody, limit: 'small', required: true },
    answers: { 200: { description: 'The limits now in force.', schema: s.object({ tenant_id: s.string(), plan, ...limits }) } },
    problems: [...BODY_ERRORS, 404],
  },
  deactivate: {
    id: 'deactivate',
    method: 'post',
    path: '/gate/admin/deactivate',
    tag: ADMIN,
    auth: 'admin',
    summary: 'Deactivate a tenant: its key stops working; data is purged after the retention period',
    body: { json: tenantOnlyBody, limit: 'small', required: true },
    answers: {
      200: {
        description: 'Deactivated.',
        schema: s.object({ tenant_id: s.string(), active: s.boolean(), deactivated_at: s.number(), purge_after: s.number() }),
      },
    },
    problems: [...BODY_ERRORS, 404],
  },
  reload: {
    id: 'reload',
    method: 'post',
    path: '/gate/admin/reload',
    tag: ADMIN,
    auth: 'admin',
    summary: 'Re-read the tenant registry from disk',
    body: { json: reloadBody, limit: 'small' },
    answers: {
      200: { description: 'Reloaded.', schema: s.object({ reloaded: s.boolean(), tenants: s.integer(0, Number.MAX_SAFE_INTEGER) }) },
    },
    problems: BODY_ERRORS,
  },
  tenants: {
    id: 'tenants',
    method: 'get',
    path: '/gate/admin/tenants',
    tag: ADMIN,
    auth: 'admin',
    summary: 'Every tenant',
    answers: { 200: { description: 'Tenants.', schema: s.object({ tenants: s.array(tenant) }) } },
  },
  usage_all: {
    id: 'usage_all',
    method: 'get',
    path: '/gate/admin/usage',
    tag: ADMIN,
    auth: 'admin',
    summary: 'CU used by every tenant in a period',
    query: periodQuery,
    answers: {
      200: {
        description: 'Usage per tenant.',
        schema: s.object({ period: s.string(), tenants: s.array(s.object({ tenant_id: s.string(), active: s.boolean(), ...usage })) }),
      },
    },
    problems: [400],
  },
  usage_tenant: {
    id: 'usage_tenant',
    method: 'get',
    path: '/gate/admin/usage/{tenant_id}',
    tag: ADMIN,
    auth: 'admin',
    summary: 'CU used by one tenant in a period, by operation',
    pathParams: { tenant_id: tenantId },
    query: periodQuery,
    answers: {
      200: { description: 'Usage.', schema: tenantUsage },
    },
    problems: [400, 404],
  },
} satisfies Record<string, Endpoint>;
