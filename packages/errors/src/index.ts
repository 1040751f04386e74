export { AgentdError, type ErrorGuard, errorGuard } from './agentd-error.js';
export { firstIssueText, type IssueLike, toFieldIssues } from './issues.js';
