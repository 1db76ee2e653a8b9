// Generated from docs/openapi.json by clients/typescript/tools/generate.ts (npm run build:openapi).
// Do not edit by hand; test/clients/coverage.test.ts fails when it is not current.

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Stable machine-readable code (CONTRACT.md section 4). */
  code: string;
  /** Path of the offending field, when one is to blame (e.g. params.n_bits). */
  field?: string;
};

/** Compress and store an array or blob */
export type PutPath = Record<string, never>;
export type PutQuery = {
  /** Key of the entry within its namespace. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  key?: string;
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** Oracle hint; sets the tolerance when `tolerance` is absent: structured_data 0.000001, simulation 0.00001, timeseries 0.0001, embedding 0.001, image 0.001, lossless 0. */
  domain?: "structured_data" | "simulation" | "timeseries" | "embedding" | "image" | "lossless";
  /** Relative Frobenius error target; overrides the domain's. */
  tolerance?: number;
  /** Cap on every bond dimension; with it a weak result is stored rather than passed through. */
  max_rank?: number;
};
export type PutRequest = {
  /** Key of the entry within its namespace. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  key: string;
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** Standard base64 of a NumPy .npy file (an array) or of raw bytes (a blob), CONTRACT.md section 2. */
  data_b64: string;
  /** Arbitrary JSON object, indexed by its top-level names for search and filters: at most 64 KiB as compact JSON, 256 top-level names and 32 levels of objects and arrays (the metadata object is level 1). */
  metadata?: Record<string, unknown>;
  /** Oracle hint; sets the tolerance when `tolerance` is absent: structured_data 0.000001, simulation 0.00001, timeseries 0.0001, embedding 0.001, image 0.001, lossless 0. */
  domain?: "structured_data" | "simulation" | "timeseries" | "embedding" | "image" | "lossless";
  /** Relative Frobenius error target; overrides the domain's. */
  tolerance?: number;
  /** Cap on every bond dimension; with it a weak result is stored rather than passed through. */
  max_rank?: number;
};
export type PutResponse = {
  key?: string;
  namespace?: string;
  version?: number;
  kind?: "array" | "blob";
  dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8" | "bool";
  shape?: number[];
  layout?: "row_major" | "interleaved";
  compressed?: boolean;
  compression_ratio?: number;
  original_bytes?: number;
  stored_core_bytes?: number;
  n_cores?: number;
  /** Bond dimensions r_0 .. r_d (empty when passthrough). */
  ranks?: number[];
  max_rank?: number;
  /** Errors of what serve returns against the input (CONTRACT.md section 3). */
  fingerprint?: {
    frobenius_error?: number;
    max_abs_error?: number;
    relative_error?: number;
  };
  domain?: string;
  /** Unix seconds. */
  created_at?: number;
  verdict?: "exact" | "safe" | "weak" | "passthrough";
  tolerance?: number;
};

/** Store a tensor train given as its cores */
export type PutCoresPath = Record<string, never>;
export type PutCoresQuery = Record<string, never>;
export type PutCoresRequest = {
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** Key of the entry within its namespace. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  key: string;
  /** Arbitrary JSON object, indexed by its top-level names for search and filters: at most 64 KiB as compact JSON, 256 top-level names and 32 levels of objects and arrays (the metadata object is level 1). */
  metadata?: Record<string, unknown>;
  /** Oracle hint; sets the tolerance when `tolerance` is absent: structured_data 0.000001, simulation 0.00001, timeseries 0.0001, embedding 0.001, image 0.001, lossless 0. */
  domain?: "structured_data" | "simulation" | "timeseries" | "embedding" | "image" | "lossless";
  /** The dtype serve returns. */
  dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8";
  layout?: "row_major" | "interleaved";
  /** Cores in order; r_0 = r_d = 1, neighbouring ranks equal, every rank at most 4096. With layout row_major the mode sizes n are any positive sizes whose product is the size of shape (for shape [2, 3, 4]: [2, 3, 4], [24], [2, 12], ...). */
  cores: {
    /** .npy (float32 or float64) of shape [r_prev, n, r_next], each rank at most 4096. */
    data_b64: string;
  }[];
  /** Default [product of the n]. */
  shape?: number[];
};
export type PutCoresResponse = {
  key?: string;
  namespace?: string;
  version?: number;
  kind?: "array" | "blob";
  dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8" | "bool";
  shape?: number[];
  layout?: "row_major" | "interleaved";
  compressed?: boolean;
  compression_ratio?: number;
  original_bytes?: number;
  stored_core_bytes?: number;
  n_cores?: number;
  /** Bond dimensions r_0 .. r_d (empty when passthrough). */
  ranks?: number[];
  max_rank?: number;
  /** Errors of what serve returns against the input (CONTRACT.md section 3). */
  fingerprint?: {
    frobenius_error?: number;
    max_abs_error?: number;
    relative_error?: number;
  };
  domain?: string;
  /** Unix seconds. */
  created_at?: number;
  verdict?: "exact" | "safe" | "weak" | "passthrough";
  tolerance?: number;
};

/** Store up to 1000 trains at once, all or nothing */
export type PutCoresBatchPath = Record<string, never>;
export type PutCoresBatchQuery = Record<string, never>;
export type PutCoresBatchRequest = {
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  entries: {
    /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
    namespace?: string;
    /** Key of the entry within its namespace. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
    key: string;
    /** Arbitrary JSON object, indexed by its top-level names for search and filters: at most 64 KiB as compact JSON, 256 top-level names and 32 levels of objects and arrays (the metadata object is level 1). */
    metadata?: Record<string, unknown>;
    /** Oracle hint; sets the tolerance when `tolerance` is absent: structured_data 0.000001, simulation 0.00001, timeseries 0.0001, embedding 0.001, image 0.001, lossless 0. */
    domain?: "structured_data" | "simulation" | "timeseries" | "embedding" | "image" | "lossless";
    /** The dtype serve returns. */
    dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8";
    layout?: "row_major" | "interleaved";
    /** Cores in order; r_0 = r_d = 1, neighbouring ranks equal, every rank at most 4096. With layout row_major the mode sizes n are any positive sizes whose product is the size of shape (for shape [2, 3, 4]: [2, 3, 4], [24], [2, 12], ...). */
    cores: {
      /** .npy (float32 or float64) of shape [r_prev, n, r_next], each rank at most 4096. */
      data_b64: string;
    }[];
    /** Default [product of the n]. */
    shape?: number[];
  }[];
};
export type PutCoresBatchResponse = {
  namespace?: string;
  count?: number;
  results?: {
    key?: string;
    namespace?: string;
    version?: number;
    kind?: "array" | "blob";
    dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8" | "bool";
    shape?: number[];
    layout?: "row_major" | "interleaved";
    compressed?: boolean;
    compression_ratio?: number;
    original_bytes?: number;
    stored_core_bytes?: number;
    n_cores?: number;
    /** Bond dimensions r_0 .. r_d (empty when passthrough). */
    ranks?: number[];
    max_rank?: number;
    /** Errors of what serve returns against the input (CONTRACT.md section 3). */
    fingerprint?: {
      frobenius_error?: number;
      max_abs_error?: number;
      relative_error?: number;
    };
    domain?: string;
    /** Unix seconds. */
    created_at?: number;
    verdict?: "exact" | "safe" | "weak" | "passthrough";
    tolerance?: number;
  }[];
};

/** Fingerprint and metadata of an entry, without reconstructing it */
export type GetPath = {
  /** Namespace (percent-encoded). */
  namespace: string;
  /** Key, percent-encoded: a key a/b travels as a%2Fb. */
  key: string;
};
export type GetQuery = {
  /** A version number; default: the latest. */
  version?: number;
};
export type GetRequest = never;
export type GetResponse = {
  key?: string;
  namespace?: string;
  version?: number;
  kind?: "array" | "blob";
  dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8" | "bool";
  shape?: number[];
  layout?: "row_major" | "interleaved";
  compressed?: boolean;
  compression_ratio?: number;
  original_bytes?: number;
  stored_core_bytes?: number;
  n_cores?: number;
  /** Bond dimensions r_0 .. r_d (empty when passthrough). */
  ranks?: number[];
  max_rank?: number;
  /** Errors of what serve returns against the input (CONTRACT.md section 3). */
  fingerprint?: {
    frobenius_error?: number;
    max_abs_error?: number;
    relative_error?: number;
  };
  domain?: string;
  /** Unix seconds. */
  created_at?: number;
  verdict?: "exact" | "safe" | "weak" | "passthrough";
  tolerance?: number;
  oracle_verdict?: "exact" | "safe" | "weak" | "passthrough";
  total_core_bytes?: number;
  metadata?: Record<string, unknown>;
};

/** Reconstruct an entry (dense), hand out its cores, or place them on a GPU */
export type ServePath = Record<string, never>;
export type ServeQuery = Record<string, never>;
export type ServeRequest = {
  /** Key of the entry within its namespace. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  key: string;
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** Default: the latest. */
  version?: number;
  target?: "dense" | "gpu" | "cores";
  /** GPU device when target is gpu. */
  device?: string;
  /** Coarse view: an integer per axis, or one for every axis; averages 2^level consecutive cells along each axis (400 when an axis's size has fewer factors of 2). Applied before region and points, which index the coarse grid. */
  level?: unknown;
  /** One NumPy slice [start, stop, step] per axis (shorter lists and null entries take the defaults, negative indices count from the end, null is the whole axis; missing trailing axes are whole): the answer is array[slices]. */
  region?: unknown;
  /** Index tuples (one integer per axis, negative from the end): the answer is a 1-D array of their values in the order given. A selection may cost 4.29e+9 multiply-adds, or 4096 per value it returns. */
  points?: unknown;
};
export type ServeResponse = {
  key?: string;
  namespace?: string;
  version?: number;
  target?: "dense" | "gpu" | "cores";
  kind?: "array" | "blob";
  dtype?: "float64" | "float32" | "float16" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16" | "uint8" | "bool";
  shape?: number[];
  layout?: "row_major" | "interleaved";
  verdict?: "exact" | "safe" | "weak" | "passthrough";
  fingerprint?: Record<string, unknown>;
  data_b64?: string;
  ranks?: number[];
  cores?: {
    shape?: number[];
    data_b64?: string;
  }[];
  device?: string;
  placed?: boolean;
  resident_before?: boolean;
  gpu_core_bytes?: number;
  n_cores?: number;
};

/** Soft-delete every version of a key */
export type DeletePath = {
  /** Namespace (percent-encoded). */
  namespace: string;
  /** Key, percent-encoded: a key a/b travels as a%2Fb. */
  key: string;
};
export type DeleteQuery = Record<string, never>;
export type DeleteRequest = never;
export type DeleteResponse = {
  key?: string;
  namespace?: string;
  deleted?: boolean;
  versions?: number;
  /** Unix seconds. */
  purge_after?: number;
};

/** Latest versions of the keys of a namespace, in ascending byte order */
export type ListPath = {
  /** Namespace (percent-encoded). */
  namespace: string;
};
export type ListQuery = {
  /** Key prefix filter (empty: every key). */
  prefix?: string;
  limit?: number;
  offset?: number;
};
export type ListRequest = never;
export type ListResponse = {
  namespace?: string;
  prefix?: string;
  keys?: {
    key?: string;
    version?: number;
    created_at?: number;
    verdict?: "exact" | "safe" | "weak" | "passthrough";
    compressed?: boolean;
    original_bytes?: number;
    stored_core_bytes?: number;
  }[];
  count?: number;
  total?: number;
  limit?: number;
  offset?: number;
};

/** Similarity of two stored entries, from their cores */
export type SimilarityPath = Record<string, never>;
export type SimilarityQuery = Record<string, never>;
export type SimilarityRequest = {
  /** First key. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  key_a: string;
  /** Second key. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  key_b: string;
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** cosine and dot: larger is closer; euclidean: smaller is closer. */
  metric?: "cosine" | "euclidean" | "dot";
};
export type SimilarityResponse = {
  key_a?: string;
  key_b?: string;
  namespace?: string;
  metric?: string;
  score?: number;
};

/** The k entries of a namespace closest to a stored one */
export type TopkPath = Record<string, never>;
export type TopkQuery = Record<string, never>;
export type TopkRequest = {
  /** Key of the stored query entry (left out of the results). 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  query_key: string;
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** How many results. */
  k?: number;
  /** cosine and dot: larger is closer; euclidean: smaller is closer. */
  metric?: "cosine" | "euclidean" | "dot";
  /** Top-level metadata keys and the JSON values they must equal (strictly: true is not 1); {} matches every entry. Nested at most 32 levels of objects and arrays (the filters object is level 1). */
  filters?: Record<string, unknown>;
};
export type TopkResponse = {
  query_key?: string;
  metric?: string;
  n_candidates?: number;
  /** [key, score] pairs, best first; ties by key. */
  results?: unknown[][];
};

/** The k entries of a namespace closest to an array given in the request */
export type TopkVectorPath = Record<string, never>;
export type TopkVectorQuery = Record<string, never>;
export type TopkVectorRequest = {
  /** Standard base64 of a NumPy .npy file (an array) or of raw bytes (a blob), CONTRACT.md section 2. */
  data_b64: string;
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** How many results. */
  k?: number;
  /** cosine and dot: larger is closer; euclidean: smaller is closer. */
  metric?: "cosine" | "euclidean" | "dot";
  /** Top-level metadata keys and the JSON values they must equal (strictly: true is not 1); {} matches every entry. Nested at most 32 levels of objects and arrays (the filters object is level 1). */
  filters?: Record<string, unknown>;
  /** Oracle hint; sets the tolerance when `tolerance` is absent: structured_data 0.000001, simulation 0.00001, timeseries 0.0001, embedding 0.001, image 0.001, lossless 0. */
  domain?: "structured_data" | "simulation" | "timeseries" | "embedding" | "image" | "lossless";
  /** Relative Frobenius error target; overrides the domain's. */
  tolerance?: number;
};
export type TopkVectorResponse = {
  query_key?: string;
  metric?: string;
  n_candidates?: number;
  /** [key, score] pairs, best first; ties by key. */
  results?: unknown[][];
};

/** Entries whose metadata matches every filter, in ascending key order, a page at a time */
export type SearchPath = Record<string, never>;
export type SearchQuery = Record<string, never>;
export type SearchRequest = {
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** Top-level metadata keys and the JSON values they must equal (strictly: true is not 1); {} matches every entry. Nested at most 32 levels of objects and arrays (the filters object is level 1). */
  filters: Record<string, unknown>;
  /** How many matches to return at most. */
  limit?: number;
  /** How many matches (in key order) to skip first. */
  offset?: number;
};
export type SearchResponse = {
  namespace?: string;
  count?: number;
  /** Every match, not only this page. */
  total?: number;
  results?: {
    key?: string;
    metadata?: Record<string, unknown>;
    version?: number;
  }[];
};

/** Queue a simulation job; its output fields are stored as entries */
export type SimulationSubmitPath = Record<string, never>;
export type SimulationSubmitQuery = Record<string, never>;
export type SimulationSubmitRequest = {
  solver: "poisson_2d" | "navier_stokes_2d" | "euler_2d" | "helmholtz_3d";
  /** Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL. */
  namespace?: string;
  /** Solver params; n_bits for every solver (see the variants). */
  params: Record<string, unknown>;
  /** Prefix of the output keys (default: the solver name); at most 960 bytes. 1 to 1024 bytes of UTF-8, no control characters (U+0000-U+001F, U+007F). */
  output_key_prefix?: string;
} & ({
  solver: "poisson_2d";
  params: {
    /** log2 of the grid points per axis: 9 (512) to 14 (16384). */
    n_bits: number;
    /** manufactured: f = 2π² sin πx sin πy. */
    rhs?: "manufactured" | "gaussians" | "dipole";
    /** Relative residual at which CG stops. */
    tol?: number;
    /** Cap on CG iterations (default 10 · 2^n_bits). */
    max_iters?: number;
    /** One multigrid V-cycle per iteration, or none. */
    preconditioner?: "multigrid" | "none";
    /** Seed of the random parts of the set-up. */
    seed?: number;
    /** Also store every field each this many steps ({prefix}/{field}/step_{n}); at least steps / 1000 (at most 1000 snapshots a run). */
    snapshot_every?: number;
    /** Run-time budget in seconds (time running, not queued or paused); past it the job fails with code time_limit, keeping its snapshots. */
    max_seconds?: number;
  };
} | {
  solver: "navier_stokes_2d";
  params: {
    /** log2 of the grid points per axis: 9 (512) to 12 (4096). */
    n_bits: number;
    /** Reynolds number (ν = 1 / reynolds). */
    reynolds: number;
    /** Time steps. */
    steps: number;
    /** Time step; at most the explicit stability limit of the grid (the 400 names it): SSP-RK3 stable for every Fourier mode of the advection-diffusion at the initial speeds and reynolds, at 80% of that limit. */
    dt: number;
    /** Rank cap of the QTT fields. */
    max_rank?: number;
    /** The initial velocity (docs/simulations.md describes each). */
    initial?: "taylor_green" | "shear_layer" | "decaying_turbulence";
    /** Seed of the random parts of the set-up. */
    seed?: number;
    /** Also store every field each this many steps ({prefix}/{field}/step_{n}); at least steps / 1000 (at most 1000 snapshots a run). */
    snapshot_every?: number;
    /** Run-time budget in seconds (time running, not queued or paused); past it the job fails with code time_limit, keeping its snapshots. */
    max_seconds?: number;
  };
} | {
  solver: "euler_2d";
  params: {
    /** log2 of the cells per axis: 9 (512) to 13 (8192). */
    n_bits: number;
    /** The initial data (docs/simulations.md describes each). */
    problem?: "isentropic_vortex" | "sod_x" | "riemann_config3" | "kelvin_helmholtz";
    /** End time (default 1, sod_x 0.2, riemann_config3 0.3); give t_end or steps, not both. */
    t_end?: number;
    /** CFL-limited time steps; give t_end or steps, not both. */
    steps?: number;
    /** Courant number of each step. */
    cfl?: number;
    /** Seed of the random parts of the set-up. */
    seed?: number;
    /** Also store every field each this many steps ({prefix}/{field}/step_{n}); at least steps / 1000 (at most 1000 snapshots a run). */
    snapshot_every?: number;
    /** Run-time budget in seconds (time running, not queued or paused); past it the job fails with code time_limit, keeping its snapshots. */
    max_seconds?: number;
  };
} | {
  solver: "helmholtz_3d";
  params: {
    /** log2 of the grid points per axis: 9 (512) to 14 (16384). */
    n_bits: number;
    /** Diffusion coefficient. */
    nu: number;
    /** Time step (implicit). */
    dt: number;
    /** Time steps. */
    steps: number;
    /** Periodic, or u = 0 on the faces. */
    boundary?: "periodic" | "dirichlet";
    /** modes: the list below; gaussian: exp(-|x - c|²/(2·0.1²)). */
    initial?: "modes" | "gaussian";
    /** With initial "modes": [[kx, ky, kz, amplitude], ...], 1 to 64 modes, wave numbers integers in 1..1000000, |amplitude| <= 1000000 (default [[1, 1, 1, 1.0]]). */
    modes?: number[][];
    /** A constant source s in (I - ν dt Δ) u⁺ = u + dt s; gaussian: the initial gaussian. */
    source?: "none" | "gaussian";
    /** Rank cap of the QTT field. */
    max_rank?: number;
    /** Solver tolerance and rounding. */
    tol?: number;
    /** Seed of the random parts of the set-up. */
    seed?: number;
    /** Also store every field each this many steps ({prefix}/{field}/step_{n}); at least steps / 1000 (at most 1000 snapshots a run). */
    snapshot_every?: number;
    /** Run-time budget in seconds (time running, not queued or paused); past it the job fails with code time_limit, keeping its snapshots. */
    max_seconds?: number;
  };
});
export type SimulationSubmitResponse = {
  job_id?: string;
  solver?: "poisson_2d" | "navier_stokes_2d" | "euler_2d" | "helmholtz_3d";
  status?: "queued" | "running" | "completed" | "failed";
  namespace?: string;
  output_key_prefix?: string;
  params?: Record<string, unknown>;
  created_at?: number;
};

/** A job of the tenant, with live progress */
export type SimulationStatusPath = {
  /** As submit returned it. */
  job_id: string;
};
export type SimulationStatusQuery = Record<string, never>;
export type SimulationStatusRequest = never;
export type SimulationStatusResponse = {
  job_id?: string;
  status?: "queued" | "running" | "completed" | "failed";
  solver?: "poisson_2d" | "navier_stokes_2d" | "euler_2d" | "helmholtz_3d";
  namespace?: string;
  output_key_prefix?: string;
  params?: Record<string, unknown>;
  progress?: {
    steps_completed?: number;
    steps_total?: number;
    elapsed_s?: number;
  };
  created_at?: number;
  started_at?: number;
  finished_at?: number;
  /** Output keys (completed jobs; a failed job that kept snapshots lists them). */
  outputs?: string[];
  /** Scalar facts of the run (completed jobs). */
  stats?: Record<string, unknown>;
  /** A problem object (failed jobs). */
  error?: Record<string, unknown>;
};

/** Cancel a job of the tenant */
export type SimulationCancelPath = {
  /** As submit returned it. */
  job_id: string;
};
export type SimulationCancelQuery = Record<string, never>;
export type SimulationCancelRequest = never;
export type SimulationCancelResponse = {
  job_id?: string;
  status?: "queued" | "running" | "completed" | "failed";
  solver?: "poisson_2d" | "navier_stokes_2d" | "euler_2d" | "helmholtz_3d";
  namespace?: string;
  output_key_prefix?: string;
  params?: Record<string, unknown>;
  progress?: {
    steps_completed?: number;
    steps_total?: number;
    elapsed_s?: number;
  };
  created_at?: number;
  started_at?: number;
  finished_at?: number;
  /** Output keys (completed jobs; a failed job that kept snapshots lists them). */
  outputs?: string[];
  /** Scalar facts of the run (completed jobs). */
  stats?: Record<string, unknown>;
  /** A problem object (failed jobs). */
  error?: Record<string, unknown>;
};

/** The tenant's jobs, newest first */
export type SimulationListPath = Record<string, never>;
export type SimulationListQuery = {
  /** Only jobs writing to this namespace. */
  namespace?: string;
  status?: "queued" | "running" | "completed" | "failed";
  limit?: number;
};
export type SimulationListRequest = never;
export type SimulationListResponse = {
  jobs?: {
    job_id?: string;
    status?: "queued" | "running" | "completed" | "failed";
    solver?: "poisson_2d" | "navier_stokes_2d" | "euler_2d" | "helmholtz_3d";
    namespace?: string;
    output_key_prefix?: string;
    params?: Record<string, unknown>;
    progress?: {
      steps_completed?: number;
      steps_total?: number;
      elapsed_s?: number;
    };
    created_at?: number;
    started_at?: number;
    finished_at?: number;
    /** Output keys (completed jobs; a failed job that kept snapshots lists them). */
    outputs?: string[];
    /** Scalar facts of the run (completed jobs). */
    stats?: Record<string, unknown>;
    /** A problem object (failed jobs). */
    error?: Record<string, unknown>;
  }[];
  count?: number;
};

/** The caller's usage in a period, by operation, and its stored bytes */
export type OwnUsagePath = Record<string, never>;
export type OwnUsageQuery = {
  /** A month, YYYY-MM (default: the current UTC month). */
  period?: string;
};
export type OwnUsageRequest = never;
export type OwnUsageResponse = {
  tenant_id?: string;
  period?: string;
  /** CU used in the period: an exact sum of thousandths of a CU. */
  cus_used?: number;
  monthly_quota?: number;
  utilization?: number;
  /** Bytes stored now (whatever the period asked): live and deleted-but-unpurged versions, core bytes or data bytes when uncompressed, simulation outputs included. */
  stored_bytes?: number;
  /** Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited). */
  storage_quota_bytes?: unknown;
  breakdown?: {
    put?: number;
    get?: number;
    list?: number;
    serve?: number;
    query_topk?: number;
    search?: number;
    delete?: number;
    simulation?: number;
  };
};

/** The caller's namespaces and what its key may do in each */
export type OwnNamespacesPath = Record<string, never>;
export type OwnNamespacesQuery = Record<string, never>;
export type OwnNamespacesRequest = never;
export type OwnNamespacesResponse = {
  tenant_id?: string;
  namespaces?: {
    namespace?: string;
    /** The operations the key may run in this namespace (the ACL grants a namespace whole). */
    operations?: Array<"put" | "put_cores" | "put_cores_batch" | "get" | "serve_dense" | "serve_gpu" | "serve_cores" | "delete" | "list" | "similarity" | "topk" | "topk_vector" | "search" | "simulation_submit" | "simulation_list">;
  }[];
};

/** Create a tenant and issue its API key (shown once) */
export type CreateTenantPath = Record<string, never>;
export type CreateTenantQuery = Record<string, never>;
export type CreateTenantRequest = {
  /** Tenant identifier (CONTRACT.md section 1). */
  tenant_id: string;
  plan?: "starter" | "builder" | "pro" | "enterprise";
  namespaces?: string[];
  /** Contact address. */
  email?: string;
  /** Custom limit (plan enterprise only). */
  rate_limit?: {
    requests: number;
    window_s: number;
  };
  /** Custom monthly quota in CU (plan enterprise only). */
  monthly_quota?: number;
  /** Custom storage quota in bytes (plan enterprise only; absent: SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES). Counts the bytes stored for live and deleted-but-unpurged versions (core bytes, or data bytes when uncompressed). */
  storage_quota_bytes?: number;
};
export type CreateTenantResponse = {
  tenant_id?: string;
  plan?: "starter" | "builder" | "pro" | "enterprise";
  namespaces?: string[];
  active?: boolean;
  email?: string;
  monthly_quota?: number;
  rate_limit?: {
    requests?: number;
    window_s?: number;
  };
  /** Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited). */
  storage_quota_bytes?: unknown;
  created_at?: number;
  deactivated_at?: number;
  purge_after?: number;
  /** tts_ + 43 base64url characters; shown once. */
  api_key?: string;
};

/** Replace a tenant's API key (the old one stops working at once) */
export type RotateKeyPath = Record<string, never>;
export type RotateKeyQuery = Record<string, never>;
export type RotateKeyRequest = {
  /** Tenant identifier (CONTRACT.md section 1). */
  tenant_id: string;
};
export type RotateKeyResponse = {
  tenant_id?: string;
  api_key?: string;
  rotated_at?: number;
};

/** Add a namespace to a tenant's ACL (a no-op when present) */
export type AddNamespacePath = Record<string, never>;
export type AddNamespaceQuery = Record<string, never>;
export type AddNamespaceRequest = {
  /** Tenant identifier (CONTRACT.md section 1). */
  tenant_id: string;
  namespace: string;
};
export type AddNamespaceResponse = {
  tenant_id?: string;
  namespaces?: string[];
};

/** Change a tenant's plan (and custom limits, enterprise only) */
export type UpdateTierPath = Record<string, never>;
export type UpdateTierQuery = Record<string, never>;
export type UpdateTierRequest = {
  /** Tenant identifier (CONTRACT.md section 1). */
  tenant_id: string;
  plan: "starter" | "builder" | "pro" | "enterprise";
  /** Custom limit (plan enterprise only). */
  rate_limit?: {
    requests: number;
    window_s: number;
  };
  /** Custom monthly quota in CU (plan enterprise only). */
  monthly_quota?: number;
  /** Custom storage quota in bytes (plan enterprise only; absent: SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES). Counts the bytes stored for live and deleted-but-unpurged versions (core bytes, or data bytes when uncompressed). */
  storage_quota_bytes?: number;
};
export type UpdateTierResponse = {
  tenant_id?: string;
  plan?: "starter" | "builder" | "pro" | "enterprise";
  monthly_quota?: number;
  rate_limit?: {
    requests?: number;
    window_s?: number;
  };
  /** Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited). */
  storage_quota_bytes?: unknown;
};

/** Deactivate a tenant: its key stops working; data is purged after the retention period */
export type DeactivatePath = Record<string, never>;
export type DeactivateQuery = Record<string, never>;
export type DeactivateRequest = {
  /** Tenant identifier (CONTRACT.md section 1). */
  tenant_id: string;
};
export type DeactivateResponse = {
  tenant_id?: string;
  active?: boolean;
  deactivated_at?: number;
  purge_after?: number;
};

/** Re-read the tenant registry from disk */
export type ReloadPath = Record<string, never>;
export type ReloadQuery = Record<string, never>;
export type ReloadRequest = Record<string, never>;
export type ReloadResponse = {
  reloaded?: boolean;
  tenants?: number;
};

/** Every tenant */
export type TenantsPath = Record<string, never>;
export type TenantsQuery = Record<string, never>;
export type TenantsRequest = never;
export type TenantsResponse = {
  tenants?: {
    tenant_id?: string;
    plan?: "starter" | "builder" | "pro" | "enterprise";
    namespaces?: string[];
    active?: boolean;
    email?: string;
    monthly_quota?: number;
    rate_limit?: {
      requests?: number;
      window_s?: number;
    };
    /** Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited). */
    storage_quota_bytes?: unknown;
    created_at?: number;
    deactivated_at?: number;
    purge_after?: number;
  }[];
};

/** CU used by every tenant in a period */
export type UsageAllPath = Record<string, never>;
export type UsageAllQuery = {
  /** A month, YYYY-MM (default: the current UTC month). */
  period?: string;
};
export type UsageAllRequest = never;
export type UsageAllResponse = {
  period?: string;
  tenants?: {
    tenant_id?: string;
    active?: boolean;
    /** CU used in the period: an exact sum of thousandths of a CU. */
    cus_used?: number;
    monthly_quota?: number;
    utilization?: number;
    /** Bytes stored now (whatever the period asked): live and deleted-but-unpurged versions, core bytes or data bytes when uncompressed, simulation outputs included. */
    stored_bytes?: number;
    /** Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited). */
    storage_quota_bytes?: unknown;
  }[];
};

/** CU used by one tenant in a period, by operation */
export type UsageTenantPath = {
  /** Tenant identifier (CONTRACT.md section 1). */
  tenant_id: string;
};
export type UsageTenantQuery = {
  /** A month, YYYY-MM (default: the current UTC month). */
  period?: string;
};
export type UsageTenantRequest = never;
export type UsageTenantResponse = {
  tenant_id?: string;
  period?: string;
  /** CU used in the period: an exact sum of thousandths of a CU. */
  cus_used?: number;
  monthly_quota?: number;
  utilization?: number;
  /** Bytes stored now (whatever the period asked): live and deleted-but-unpurged versions, core bytes or data bytes when uncompressed, simulation outputs included. */
  stored_bytes?: number;
  /** Storage quota in bytes (integer), or null when unlimited: starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise its storage_quota_bytes or SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES (-1: unlimited). */
  storage_quota_bytes?: unknown;
  breakdown?: {
    put?: number;
    get?: number;
    list?: number;
    serve?: number;
    query_topk?: number;
    search?: number;
    delete?: number;
    simulation?: number;
  };
};

/** Prometheus metrics (text exposition format 0.0.4) */
export type MetricsPath = Record<string, never>;
export type MetricsQuery = Record<string, never>;
export type MetricsRequest = never;
export type MetricsResponse = string;

/** Liveness, engine backend and database state */
export type HealthPath = Record<string, never>;
export type HealthQuery = Record<string, never>;
export type HealthRequest = never;
export type HealthResponse = {
  status?: "ok" | "degraded" | "draining";
  version?: string;
  uptime_s?: number;
  engine?: {
    backend?: "cpu" | "cuda";
    cuda_devices?: number;
    blas?: string;
    threads?: number;
  };
  db?: "ok" | "error";
};

/** This document (OpenAPI 3.1) */
export type OpenapiPath = Record<string, never>;
export type OpenapiQuery = Record<string, never>;
export type OpenapiRequest = never;
export type OpenapiResponse = Record<string, unknown>;

/** The API reference for people (HTML, self-contained) */
export type DocsPath = Record<string, never>;
export type DocsQuery = Record<string, never>;
export type DocsRequest = never;
export type DocsResponse = string;

/** Where the API reference and the web console are */
export type RootPath = Record<string, never>;
export type RootQuery = Record<string, never>;
export type RootRequest = never;
export type RootResponse = {
  service?: string;
  version?: string;
  docs?: string;
  openapi?: string;
  console?: string;
};

/** The web console (HTML; it signs in with an API key or the service key, kept in sessionStorage) */
export type ConsolePath = Record<string, never>;
export type ConsoleQuery = Record<string, never>;
export type ConsoleRequest = never;
export type ConsoleResponse = string;

/** A file of the console's build (content-hashed name, cached for good) */
export type ConsoleAssetPath = {
  /** A file name from the console page. */
  file: string;
};
export type ConsoleAssetQuery = Record<string, never>;
export type ConsoleAssetRequest = never;
export type ConsoleAssetResponse = string;

/** Every operation of the API: how to call it. */
export const OPERATIONS = {
  put: { method: 'POST', path: "/v1/put", success: 200, auth: 'tenant', bodyTypes: ["application/json","application/x-npy","application/octet-stream"], replyTypes: ["application/json"] },
  put_cores: { method: 'POST', path: "/v1/put_cores", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  put_cores_batch: { method: 'POST', path: "/v1/put_cores_batch", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  get: { method: 'GET', path: "/v1/get/{namespace}/{key}", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  serve: { method: 'POST', path: "/v1/serve", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json","application/x-npy","application/octet-stream"] },
  delete: { method: 'DELETE', path: "/v1/delete/{namespace}/{key}", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  list: { method: 'GET', path: "/v1/list/{namespace}", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  similarity: { method: 'POST', path: "/v1/query/similarity", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  topk: { method: 'POST', path: "/v1/query/topk", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  topk_vector: { method: 'POST', path: "/v1/query/topk_vector", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  search: { method: 'POST', path: "/v1/query/search", success: 200, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  simulation_submit: { method: 'POST', path: "/v1/simulation/submit", success: 202, auth: 'tenant', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  simulation_status: { method: 'GET', path: "/v1/simulation/status/{job_id}", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  simulation_cancel: { method: 'POST', path: "/v1/simulation/cancel/{job_id}", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  simulation_list: { method: 'GET', path: "/v1/simulation/list", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  own_usage: { method: 'GET', path: "/v1/usage", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  own_namespaces: { method: 'GET', path: "/v1/namespaces", success: 200, auth: 'tenant', bodyTypes: [], replyTypes: ["application/json"] },
  create_tenant: { method: 'POST', path: "/gate/onboard/create", success: 201, auth: 'service', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  rotate_key: { method: 'POST', path: "/gate/onboard/rotate-key", success: 200, auth: 'service', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  add_namespace: { method: 'POST', path: "/gate/onboard/add-namespace", success: 200, auth: 'service', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  update_tier: { method: 'POST', path: "/gate/onboard/update-tier", success: 200, auth: 'service', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  deactivate: { method: 'POST', path: "/gate/admin/deactivate", success: 200, auth: 'service', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  reload: { method: 'POST', path: "/gate/admin/reload", success: 200, auth: 'service', bodyTypes: ["application/json"], replyTypes: ["application/json"] },
  tenants: { method: 'GET', path: "/gate/admin/tenants", success: 200, auth: 'service', bodyTypes: [], replyTypes: ["application/json"] },
  usage_all: { method: 'GET', path: "/gate/admin/usage", success: 200, auth: 'service', bodyTypes: [], replyTypes: ["application/json"] },
  usage_tenant: { method: 'GET', path: "/gate/admin/usage/{tenant_id}", success: 200, auth: 'service', bodyTypes: [], replyTypes: ["application/json"] },
  metrics: { method: 'GET', path: "/gate/metrics", success: 200, auth: 'service', bodyTypes: [], replyTypes: ["text/plain"] },
  health: { method: 'GET', path: "/gate/health", success: 200, auth: 'none', bodyTypes: [], replyTypes: ["application/json"] },
  openapi: { method: 'GET', path: "/openapi.json", success: 200, auth: 'none', bodyTypes: [], replyTypes: ["application/json"] },
  docs: { method: 'GET', path: "/docs", success: 200, auth: 'none', bodyTypes: [], replyTypes: ["text/html"] },
  root: { method: 'GET', path: "/", success: 200, auth: 'none', bodyTypes: [], replyTypes: ["application/json"] },
  console: { method: 'GET', path: "/console", success: 200, auth: 'none', bodyTypes: [], replyTypes: ["text/html"] },
  console_asset: { method: 'GET', path: "/console/assets/{file}", success: 200, auth: 'none', bodyTypes: [], replyTypes: ["application/octet-stream"] },
} as const;

export type OperationId = keyof typeof OPERATIONS;

/** Every operation's types. */
export interface OperationTypes {
  put: { path: PutPath; query: PutQuery; body: PutRequest; response: PutResponse };
  put_cores: { path: PutCoresPath; query: PutCoresQuery; body: PutCoresRequest; response: PutCoresResponse };
  put_cores_batch: { path: PutCoresBatchPath; query: PutCoresBatchQuery; body: PutCoresBatchRequest; response: PutCoresBatchResponse };
  get: { path: GetPath; query: GetQuery; body: GetRequest; response: GetResponse };
  serve: { path: ServePath; query: ServeQuery; body: ServeRequest; response: ServeResponse };
  delete: { path: DeletePath; query: DeleteQuery; body: DeleteRequest; response: DeleteResponse };
  list: { path: ListPath; query: ListQuery; body: ListRequest; response: ListResponse };
  similarity: { path: SimilarityPath; query: SimilarityQuery; body: SimilarityRequest; response: SimilarityResponse };
  topk: { path: TopkPath; query: TopkQuery; body: TopkRequest; response: TopkResponse };
  topk_vector: { path: TopkVectorPath; query: TopkVectorQuery; body: TopkVectorRequest; response: TopkVectorResponse };
  search: { path: SearchPath; query: SearchQuery; body: SearchRequest; response: SearchResponse };
  simulation_submit: { path: SimulationSubmitPath; query: SimulationSubmitQuery; body: SimulationSubmitRequest; response: SimulationSubmitResponse };
  simulation_status: { path: SimulationStatusPath; query: SimulationStatusQuery; body: SimulationStatusRequest; response: SimulationStatusResponse };
  simulation_cancel: { path: SimulationCancelPath; query: SimulationCancelQuery; body: SimulationCancelRequest; response: SimulationCancelResponse };
  simulation_list: { path: SimulationListPath; query: SimulationListQuery; body: SimulationListRequest; response: SimulationListResponse };
  own_usage: { path: OwnUsagePath; query: OwnUsageQuery; body: OwnUsageRequest; response: OwnUsageResponse };
  own_namespaces: { path: OwnNamespacesPath; query: OwnNamespacesQuery; body: OwnNamespacesRequest; response: OwnNamespacesResponse };
  create_tenant: { path: CreateTenantPath; query: CreateTenantQuery; body: CreateTenantRequest; response: CreateTenantResponse };
  rotate_key: { path: RotateKeyPath; query: RotateKeyQuery; body: RotateKeyRequest; response: RotateKeyResponse };
  add_namespace: { path: AddNamespacePath; query: AddNamespaceQuery; body: AddNamespaceRequest; response: AddNamespaceResponse };
  update_tier: { path: UpdateTierPath; query: UpdateTierQuery; body: UpdateTierRequest; response: UpdateTierResponse };
  deactivate: { path: DeactivatePath; query: DeactivateQuery; body: DeactivateRequest; response: DeactivateResponse };
  reload: { path: ReloadPath; query: ReloadQuery; body: ReloadRequest; response: ReloadResponse };
  tenants: { path: TenantsPath; query: TenantsQuery; body: TenantsRequest; response: TenantsResponse };
  usage_all: { path: UsageAllPath; query: UsageAllQuery; body: UsageAllRequest; response: UsageAllResponse };
  usage_tenant: { path: UsageTenantPath; query: UsageTenantQuery; body: UsageTenantRequest; response: UsageTenantResponse };
  metrics: { path: MetricsPath; query: MetricsQuery; body: MetricsRequest; response: MetricsResponse };
  health: { path: HealthPath; query: HealthQuery; body: HealthRequest; response: HealthResponse };
  openapi: { path: OpenapiPath; query: OpenapiQuery; body: OpenapiRequest; response: OpenapiResponse };
  docs: { path: DocsPath; query: DocsQuery; body: DocsRequest; response: DocsResponse };
  root: { path: RootPath; query: RootQuery; body: RootRequest; response: RootResponse };
  console: { path: ConsolePath; query: ConsoleQuery; body: ConsoleRequest; response: ConsoleResponse };
  console_asset: { path: ConsoleAssetPath; query: ConsoleAssetQuery; body: ConsoleAssetRequest; response: ConsoleAssetResponse };
}
