export { AgentdError, type ErrorGuard, errorGuard } from './agentd-error.js';
