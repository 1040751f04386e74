export { type BackoffOptions, backoffDelay } from './backoff.js';
export { KeyedMutex } from './keyed-mutex.js';
export { parseRetryAfter } from './retry-after.js';
