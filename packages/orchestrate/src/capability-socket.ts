import { matchesAnyToolPattern } from '@agentd/input-guards';
import { chmod } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { WebSearchSettings } from './config.js';
import { isBuiltin } from './internal/builtins.js';
import { CallError, checkCall, type InvokeParams, invokeParams, routeCall } from './internal/socket-calls.js';

/** The lease a socket call presents, as the lease store answers it (never the secret). */
export interface SocketLease {
  leaseId: string;
  runId: string;
  agentId: string;
  capabilities: readonly string[];
}

/** What a routed (non-builtin) call runs with: identity from the lease, never from params. */
export interface RoutedCall {
  agentId: string;
  runId: string;
  leaseId: string;
  tool: string;
  args: Record<string, unknown>;
  signal: AbortSignal;
}

/** What a routed call answers: the tool's value, or its failure as the tool runner reported it. */
export type RoutedResult = { ok: true; value: unknown } | { ok: false; errorKind: string; message: string };

/** One row of the per-run call attribution (the `orchestrate[].toolCalls` entries). */
export interface CallTally {
  tool: string;
  capability: string;
  decision: string;
  count: number;
}

/** Options of {@link openCapabilitySocket}. */
export interface CapabilitySocketOptions {
  /** Where to listen; its directory must already be private (0700). */
  socketPath: string;
  /** The one child lease this socket answers for: any other valid lease is `foreign`. */
  leaseId: string;
  /** Validates a presented secret (throws for an unknown, revoked or expired lease). */
  validate: (secret: string) => Promise<SocketLease>;
  /** Tool name patterns never routed (`name`, `prefix*`, `*part*`). */
  denylist: readonly string[];
  /** Whether the lease's agent may call a registered tool at all (its allow-list and denylists). */
  mayCall: (agentId: string, tool: string) => boolean;
  /** Whether a registered tool of that name exists. */
  hasTool: (tool: string) => boolean;
  /** Runs a registered tool through the tool runner's gate chain under the lease's identity. */
  invokeTool: (call: RoutedCall) => Promise<RoutedResult>;
  /** The jailed workspace, the root of the builtins. */
  workspace: string;
  /** The bubblewrap binary the grep builtin runs under. */
  bwrapPath: string;
  /** The web fetcher (private-network guard, DNS pinning) the `web_fetch` builtin uses. */
  webFetch?: ((url: string, signal: AbortSignal) => Promise<unknown>) | undefined;
  /** The SearXNG endpoint of the `web_search` builtin; unset, it answers "not configured". */
  webSearch?: WebSearchSettings | undefined;
  /** Aborted when the script run ends: in-flight calls stop. */
  signal: AbortSignal;
}

/** An open capability socket. */
export interface CapabilitySocket {
  /** Calls so far, by tool, capability and decision. */
  tallies(): CallTally[];
  /** Successful results handed to the script: how many, and their JSON bytes. */
  resultRefs(): { count: number; bytes: number };
  close(): Promise<void>;
}

/** The JSON-RPC error codes of the socket. */
export const SOCKET_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  toolFailed: -32000,
  leaseInvalid: -32001,
  denied: -32003,
} as const;

const MAX_LINE = 1024 * 1024;
/**
 * Whether `name` matches a denylist pattern: a tool name or glob (`*` any run, `?` one
 * character: `admin*`, `*login*`, `*_secret`), `@agentd/input-guards`' one tool-name matcher.
 */
export function matchesPattern(patterns: readonly string[], name: string): boolean {
  return matchesAnyToolPattern(patterns, name);
}

/**
 * Opens the capability socket of one script run: a Unix socket (mode 0600) taking JSON-RPC 2.0
 * `tool.invoke {lease, tool, args?}`, one JSON object per line. The contract's check order:
 * the lease (valid, this run's) and its capability, the denylist, deny-by-origin (the lease's
 * agent must be allowed the tool), the capability requirement (the tool or the builtin's
 * backing service exists), then routing to a builtin over the workspace or to the tool runner.
 */
export async function openCapabilitySocket(options: CapabilitySocketOptions): Promise<CapabilitySocket> {
  const tallies = new Map<string, CallTally>();
  const refs = { count: 0, bytes: 0 };
  const sockets = new Set<Socket>();
  const tally = (tool: string, capability: string, decision: string) => {
    const key = JSON.stringify([tool, capability, decision]);
    const row = tallies.get(key) ?? { tool, capability, decision, count: 0 };
    row.count += 1;
    tallies.set(key, row);
  };

  const call = async (params: InvokeParams): Promise<unknown> => {
    const checked = await checkCall(options, params);
    const value = await routeCall(options, checked);
    tally(params.tool, checked.capability, 'allowed');
    refs.count += 1;
    refs.bytes += Buffer.byteLength(JSON.stringify(value ?? null));
    return value ?? null;
  };

  const answer = async (line: string): Promise<Record<string, unknown>> => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return { jsonrpc: '2.0', id: null, error: { code: SOCKET_ERRORS.parse, message: 'Parse error' } };
    }
    const id = (message as { id?: unknown })?.id;
    const replyId = typeof id === 'string' || typeof id === 'number' ? id : null;
    if (
      typeof message !== 'object' ||
      message === null ||
      (message as { method?: unknown }).method !== 'tool.invoke'
    ) {
      return {
        jsonrpc: '2.0',
        id: replyId,
        error: { code: SOCKET_ERRORS.methodNotFound, message: 'Method not found' },
      };
    }
    const checked = invokeParams.safeParse((message as { params?: unknown }).params);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const field = ['params', ...(issue?.path ?? []).map(String)].join('.');
      return {
        jsonrpc: '2.0',
        id: replyId,
        error: {
          code: SOCKET_ERRORS.invalidParams,
          message: `${field}: ${issue?.message ?? 'invalid'}`,
          data: { field },
        },
      };
    }
    try {
      return { jsonrpc: '2.0', id: replyId, result: await call(checked.data) };
    } catch (error) {
      const failure =
        error instanceof CallError
          ? error
          : new CallError(
              SOCKET_ERRORS.toolFailed,
              (error as Error).message,
              { errorKind: 'tool_error' },
              'error',
            );
      const tool = checked.data.tool;
      tally(tool, isBuiltin(tool) ? 'orchestrate' : tool, failure.decision);
      return {
        jsonrpc: '2.0',
        id: replyId,
        error: { code: failure.code, message: failure.message, data: failure.data },
      };
    }
  };

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    // A script that never sends a newline must not grow the daemon's buffer without end.
    let pending = 0;
    socket.on('data', (chunk: Buffer) => {
      const end = chunk.lastIndexOf(10);
      pending = end < 0 ? pending + chunk.length : chunk.length - end - 1;
      if (pending > MAX_LINE) socket.destroy();
    });
    const lines = createInterface({ input: socket, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => {
      void answer(line).then((reply) => {
        if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => resolve());
  });
  await chmod(options.socketPath, 0o600);
  return {
    tallies: () => [...tallies.values()].map((row) => ({ ...row })),
    resultRefs: () => ({ ...refs }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
