// What each tenant operation costs (SPEC.md "CU cost per operation", CONTRACT.md section 5) and the
// usage-breakdown bucket it is counted in: the one written copy. Each route's description names the
// operations it is charged as (Endpoint.operations), and the API reference prints their cost from here.

export const BREAKDOWN_KEYS = ['put', 'get', 'list', 'serve', 'query_topk', 'search', 'delete', 'simulation'] as const;
export type BreakdownKey = (typeof BREAKDOWN_KEYS)[number];

export const OPERATIONS = {
  put: { cu: 1.0, bucket: 'put' },
  put_cores: { cu: 1.0, bucket: 'put' },
  put_cores_batch: { cu: 2.0, bucket: 'put' },
  get: { cu: 0.1, bucket: 'get' },
  serve_dense: { cu: 0.5, bucket: 'serve' },
  serve_gpu: { cu: 2.0, bucket: 'serve' },
  serve_cores: { cu: 0.5, bucket: 'serve' },
  delete: { cu: 0.1, bucket: 'delete' },
  list: { cu: 0.1, bucket: 'list' },
  similarity: { cu: 1.0, bucket: 'query_topk' },
  topk: { cu: 1.0, bucket: 'query_topk' },
  topk_vector: { cu: 1.0, bucket: 'query_topk' },
  search: { cu: 0.5, bucket: 'search' },
  simulation_submit: { cu: 5.0, bucket: 'simulation' },
  simulation_status: { cu: 0.1, bucket: 'simulation' },
  simulation_list: { cu: 0.1, bucket: 'simulation' },
  simulation_cancel: { cu: 0.1, bucket: 'simulation' },
  /** Run time of a job: charged as the job runs, once at the start of each SIMULATION_RUN_SECONDS. */
  simulation_run: { cu: 1.0, bucket: 'simulation' },
  /**
   * A tenant's reads of its own account: free, as the operator's reads of the same records are, and
   * never refused for quota, so a tenant past its quota can still see why. No bucket: never reserved.
   */
  own_usage: { cu: 0, bucket: null },
  own_namespaces: { cu: 0, bucket: null },
} as const satisfies Record<string, { cu: number; bucket: BreakdownKey | null }>;

export type Operation = keyof typeof OPERATIONS;
/** The operations a route reserves and charges (authorize): those counted in a usage bucket. */
export type ChargedOperation = { [K in Operation]: (typeof OPERATIONS)[K]['bucket'] extends null ? never : K }[Operation];

/** Every operation a tenant key may run in each namespace of its ACL (the ACL is per namespace, all or none). */
export const NAMESPACED_OPERATIONS = [
  'put',
  'put_cores',
  'put_cores_batch',
  'get',
  'serve_dense',
  'serve_gpu',
  'serve_cores',
  'delete',
  'list',
  'similarity',
  'topk',
  'topk_vector',
  'search',
  'simulation_submit',
  'simulation_list',
] as const satisfies readonly ChargedOperation[];

/** A job's run time is charged simulation_run per started period of this many seconds (CONTRACT.md section 8). */
export const SIMULATION_RUN_SECONDS = 10;
