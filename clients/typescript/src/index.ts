// ttstore's TypeScript client: `new TtstoreClient({ url, apiKey })`.
export * from './client.js';
export * from './errors.js';
export * from './npy.js';
export * from './retry.js';
export type * from './generated.js';
export { OPERATIONS } from './generated.js';
