export { configSections, DEFAULT_HOST, DEFAULT_PORT, gatewaySectionSchema } from './config-schema.js';
export type { DaemonConfig } from './config-schema.js';
export { startDaemon } from './daemon.js';
export type { DaemonOptions, RunningDaemon } from './daemon.js';
export { createTokenOffline } from './offline-token.js';
export { VERSION } from './version.js';
