import { TOOL_NAME } from '@agentd/input-guards';
import { z } from 'zod';
import {
  type CapabilitySocketOptions,
  matchesPattern,
  SOCKET_ERRORS,
  type SocketLease,
} from '../capability-socket.js';
import { BuiltinRefusal, isBuiltin, runBuiltin } from './builtins.js';

/** Identity fields a script might pass: stripped, the lease's identity is what a call runs as. */
const IDENTITY_KEYS = [
  'agentId',
  'sessionKey',
  'runId',
  'rootRunId',
  'leaseId',
  'clientId',
  'tenant',
  'memoryTenant',
];

/** The params of `tool.invoke`. */
export const invokeParams = z.strictObject({
  lease: z.string().min(1).max(512),
  tool: z.string().regex(TOOL_NAME),
  args: z.record(z.string(), z.unknown()).optional(),
});

/** Parsed `tool.invoke` params. */
export type InvokeParams = z.infer<typeof invokeParams>;

/** A refused or failed call: its JSON-RPC code, data and the decision it is tallied under. */
export class CallError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown>,
    readonly decision: string,
  ) {
    super(message);
  }
}

/** A call past every check: who makes it, what it needs, its args without identity keys. */
export interface CheckedCall {
  lease: SocketLease;
  tool: string;
  builtin: boolean;
  capability: string;
  args: Record<string, unknown>;
}

const denied = (message: string, reason: string, decision: string) =>
  new CallError(SOCKET_ERRORS.denied, message, { reason }, decision);

/**
 * The contract's check order: the lease (valid, this run's) and its capability, the
 * denylist, deny-by-origin, the capability requirement. Throws the first refusal.
 */
export async function checkCall(
  options: CapabilitySocketOptions,
  params: InvokeParams,
): Promise<CheckedCall> {
  const { tool } = params;
  const builtin = isBuiltin(tool);
  // A builtin works on what the orchestrate tool itself was granted; a tool needs its own name.
  const capability = builtin ? 'orchestrate' : tool;
  let lease: SocketLease;
  try {
    lease = await options.validate(params.lease);
  } catch (error) {
    const reason = ((error as { data?: { reason?: unknown } }).data?.reason as string) ?? 'unknown';
    throw new CallError(SOCKET_ERRORS.leaseInvalid, `lease refused: ${reason}`, { reason }, 'lease_invalid');
  }
  if (lease.leaseId !== options.leaseId) {
    throw new CallError(
      SOCKET_ERRORS.leaseInvalid,
      'lease refused: not this run',
      { reason: 'foreign' },
      'lease_foreign',
    );
  }
  if (!lease.capabilities.includes(capability)) {
    throw denied(`capability denied: ${capability}`, 'capability', 'denied_capability');
  }
  if (matchesPattern(options.denylist, tool)) {
    throw denied(`tool not reachable from a script: ${tool}`, 'denylist', 'denied_denylist');
  }
  if (!builtin && !options.mayCall(lease.agentId, tool)) {
    throw denied(`agent ${lease.agentId} may not call ${tool}`, 'origin', 'denied_origin');
  }
  if (builtin ? tool === 'web_fetch' && !options.webFetch : !options.hasTool(tool)) {
    throw denied(`tool not available: ${tool}`, 'unavailable', 'unavailable');
  }
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params.args ?? {})) {
    if (!IDENTITY_KEYS.includes(key)) args[key] = value;
  }
  return { lease, tool, builtin, capability, args };
}

/** Routes a checked call: a builtin over the workspace, or the tool runner as the lease's agent. */
export async function routeCall(options: CapabilitySocketOptions, call: CheckedCall): Promise<unknown> {
  if (call.builtin) {
    try {
      return await runBuiltin(call.tool as Parameters<typeof runBuiltin>[0], call.args, {
        root: options.workspace,
        bwrapPath: options.bwrapPath,
        signal: options.signal,
        webFetch: options.webFetch,
        webSearch: options.webSearch,
      });
    } catch (error) {
      const message =
        error instanceof BuiltinRefusal ? error.message : `${call.tool} failed: ${(error as Error).message}`;
      throw new CallError(SOCKET_ERRORS.toolFailed, message, { errorKind: 'tool_error' }, 'error');
    }
  }
  const routed = await options.invokeTool({
    agentId: call.lease.agentId,
    runId: call.lease.runId,
    leaseId: call.lease.leaseId,
    tool: call.tool,
    args: call.args,
    signal: options.signal,
  });
  if (!routed.ok) {
    throw new CallError(SOCKET_ERRORS.toolFailed, routed.message, { errorKind: routed.errorKind }, 'error');
  }
  return routed.value;
}
