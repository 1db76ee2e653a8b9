// Every endpoint the server serves, feature by feature in document order: the OpenAPI document and the
// route tests read this list, and each feature's routes.ts mounts its own part of it.
import type { Endpoint } from '../http/endpoint.js';
import { CONSOLE_ENDPOINTS } from './console/endpoints.js';
import { ACCOUNT_ENDPOINTS } from './account/endpoints.js';
import { ADMIN_ENDPOINTS } from './admin/endpoints.js';
import { HEALTH_ENDPOINTS } from './health/endpoints.js';
import { METRICS_ENDPOINTS } from './metrics/endpoints.js';
import { QUERY_ENDPOINTS } from './query/endpoints.js';
import { REFERENCE_ENDPOINTS } from './reference/endpoints.js';
import { SIMULATION_ENDPOINTS } from './simulation/endpoints.js';
import { STORAGE_ENDPOINTS } from './storage/endpoints.js';

export const ENDPOINTS: readonly Endpoint[] = [
  ...Object.values(STORAGE_ENDPOINTS),
  ...Object.values(QUERY_ENDPOINTS),
  ...Object.values(SIMULATION_ENDPOINTS),
  ...Object.values(ACCOUNT_ENDPOINTS),
  ...Object.values(ADMIN_ENDPOINTS),
  ...Object.values(METRICS_ENDPOINTS),
  ...Object.values(HEALTH_ENDPOINTS),
  ...Object.values(REFERENCE_ENDPOINTS),
  ...Object.values(CONSOLE_ENDPOINTS),
];
