// What each tenant operation costs (SPEC.md "CU cost per operation", CONTRACT.md section 5) and the
// usage-breakdown bucket it is counted in: the one written copy. Each route's description names the
// operations it is charged as (Endpoint.operations), and the API reference prints their cost from here.
// `namespaced`: the operation acts in a namespace, so a key's namespace ACL grants it (a job's
// status and cancel go by job id, its run time and the account reads by tenant).

export const BREAKDOWN_KEYS = ['put', 'get', 'list', 'serve', 'query_topk', 'search', 'delete', 'simulation'] as const;
export type BreakdownKey = (typeof BREAKDOWN_KEYS)[number];

export const OPERATIONS = {
  put: { cu: 1.0, bucket: 'put', namespaced: true },
  put_cores: { cu: 1.0, bucket: 'put', namespaced: true },
  put_cores_batch: { cu: 2.0, bucket: 'put', namespaced: true },
  get: { cu: 0.1, bucket: 'get', namespaced: true },
  serve_dense: { cu: 0.5, bucket: 'serve', namespaced: true },
  serve_gpu: { cu: 2.0, bucket: 'serve', namespaced: true },
  serve_cores: { cu: 0.5, bucket: 'serve', namespaced: true },
  delete: { cu: 0.1, bucket: 'delete', namespaced: true },
  list: { cu: 0.1, bucket: 'list', namespaced: true },
  similarity: { cu: 1.0, bucket: 'query_topk', namespaced: true },
  topk: { cu: 1.0, bucket: 'query_topk', namespaced: true },
  topk_vector: { cu: 1.0, bucket: 'query_topk', namespaced: true },
  search: { cu: 0.5, bucket: 'search', namespaced: true },
  simulation_submit: { cu: 5.0, bucket: 'simulation', namespaced: true },
  simulation_status: { cu: 0.1, bucket: 'simulation', namespaced: false },
  simulation_list: { cu: 0.1, bucket: 'simulation', namespaced: true },
  simulation_cancel: { cu: 0.1, bucket: 'simulation', namespaced: false },
  /** Run time of a job: charged as the job runs, once at the start of each SIMULATION_RUN_SECONDS. */
  simulation_run: { cu: 1.0, bucket: 'simulation', namespaced: false },
  /**
   * A tenant's reads of its own account: free, as the operator's reads of the same records are, and
   * never refused for quota, so a tenant past its quota can still see why. No bucket: never reserved.
   */
  own_usage: { cu: 0, bucket: null, namespaced: false },
  own_namespaces: { cu: 0, bucket: null, namespaced: false },
} as const satisfies Record<string, { cu: number; bucket: BreakdownKey | null; namespaced: boolean }>;

export type Operation = keyof typeof OPERATIONS;
/** The operations a route reserves and charges (authorize): those counted in a usage bucket. */
export type ChargedOperation = { [K in Operation]: (typeof OPERATIONS)[K]['bucket'] extends null ? never : K }[Operation];

/** An operation a tenant key may run in each namespace of its ACL (the ACL is per namespace, all or none). */
export type NamespacedOperation = { [K in Operation]: (typeof OPERATIONS)[K]['namespaced'] extends true ? K : never }[Operation];
/** The operations marked namespaced in OPERATIONS, in its order. */
export const NAMESPACED_OPERATIONS: readonly NamespacedOperation[] = (Object.keys(OPERATIONS) as Operation[]).filter(
  (op): op is NamespacedOperation => OPERATIONS[op].namespaced,
);

/** A job's run time is charged simulation_run per started period of this many seconds (CONTRACT.md section 8). */
export const SIMULATION_RUN_SECONDS = 10;
