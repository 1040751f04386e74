import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { callErrorText, type GatewayCall } from './gateway-call.js';

/** Options of {@link createAgentdMcpServer}. */
export interface AgentdMcpServerOptions {
  /** Calls the gateway as the MCP caller. */
  call: GatewayCall;
  /** The server's name and version in the MCP handshake. @default {name: 'agentd', version: '0.1.0'} */
  info?: { name: string; version: string } | undefined;
  /** Longest `graph_execute` waits for its run when `wait` is true, in ms. @default 600000 */
  graphWaitMs?: number | undefined;
  /** Interval of the run status polls of a waiting `graph_execute`, in ms. @default 250 */
  graphPollMs?: number | undefined;
  /**
   * The session `ask_agent` continues when the client names none: one per MCP client and
   * agent, never the caller's `/rpc` default session (which may belong to another agent).
   * Without it the gateway picks its default.
   */
  defaultSessionKey?: ((agentId: string | undefined) => string) | undefined;
}

const id = z.string().min(1).max(128);
const sessionKey = z.string().min(1).max(512);
/** Whose memory an entry is in, and its tags: what `memory_search` filters on and `memory_store` sets. */
const memoryScope = { agentId: id.optional(), tags: z.array(z.string().min(1).max(64)).max(32).optional() };

/** A tool answer: the result as JSON text, and as structured content when it is an object. */
function answer(value: unknown): CallToolResult {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  return {
    content: [{ type: 'text', text }],
    ...(value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { structuredContent: value as Record<string, unknown> }
      : {}),
  };
}

/** A gateway refusal or failure as a tool error the client's model can read. */
function refusal(error: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: callErrorText(error) }] };
}

/** Drops the keys whose value is undefined (the gateway's schemas are strict about what they get). */
function defined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
}

function jsonResource(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }] };
}

/**
 * An MCP server of agentd's agents, memory and sessions. Tools: `ask_agent`, `memory_search`,
 * `memory_store` (an admin token's), `session_history`, `graph_execute`; resources:
 * `agentd://agents`, `agentd://sessions` and `agentd://sessions/{sessionKey}`. Each tool and
 * resource is one gateway call, so what a token may do over MCP is exactly what it may do
 * over `/rpc`; a refused call is a tool error carrying the gateway's message. The SDK is loaded
 * on the first call, so a daemon that never serves MCP never loads it.
 */
export async function createAgentdMcpServer(options: AgentdMcpServerOptions): Promise<McpServer> {
  const { McpServer, ResourceTemplate } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const server = new McpServer(options.info ?? { name: 'agentd', version: '0.1.0' });
  registerTools(server, options);
  registerResources(server, options.call, ResourceTemplate);
  // The tools and resources are fixed for the server's life (one request over HTTP), so no
  // list-changed notification ever comes: the SDK's default `listChanged: true` is withdrawn.
  server.server.registerCapabilities({ tools: { listChanged: false }, resources: { listChanged: false } });
  return server;
}

/** The five tools, each one gateway call (graph_execute also polls its run). */
function registerTools(server: McpServer, options: AgentdMcpServerOptions): void {
  const { call } = options;
  const tool = (run: () => Promise<unknown>) => run().then(answer, refusal);
  server.registerTool(
    'ask_agent',
    {
      description:
        'Send a message to an agentd agent and get its reply. The session keeps the conversation: pass the sessionKey of an earlier answer to continue it.',
      inputSchema: {
        message: z.string().min(1).max(1_000_000),
        agentId: id.optional(),
        sessionKey: sessionKey.optional(),
      },
    },
    ({ message, agentId, sessionKey: key }) =>
      tool(() =>
        call(
          'agent.execute',
          defined({ message, agentId, sessionKey: key ?? options.defaultSessionKey?.(agentId) }),
        ),
      ),
  );
  server.registerTool(
    'memory_search',
    {
      description: 'Search agentd memory (full text and vectors): the best matching entries with scores.',
      inputSchema: {
        query: z.string().min(1).max(10_000),
        limit: z.number().int().min(1).max(100).optional(),
        ...memoryScope,
      },
    },
    (params) => tool(() => call('memory.search', defined(params))),
  );
  server.registerTool(
    'memory_store',
    {
      description: 'Store a new entry in agentd memory (needs an admin token). Answers its id.',
      inputSchema: {
        content: z.string().min(1).max(100_000),
        ...memoryScope,
      },
    },
    (params) => tool(() => call('memory.store', defined(params))),
  );
  server.registerTool(
    'session_history',
    {
      description: 'The stored messages of an agentd session, oldest first (the newest `limit`).',
      inputSchema: { sessionKey, limit: z.number().int().min(1).max(10_000).optional() },
    },
    ({ sessionKey: key, limit }) => tool(() => call('session.history', defined({ key, limit }))),
  );
  server.registerTool(
    'graph_execute',
    {
      description:
        'Run a defined agentd graph (pipeline) with optional inputs. With wait (the default) it answers the final status and node outputs; without, the runId.',
      inputSchema: {
        graphId: id,
        inputs: z.record(z.string(), z.unknown()).optional(),
        concurrency: z.number().int().min(1).max(1024).optional(),
        wait: z.boolean().optional(),
      },
    },
    ({ wait, ...params }) =>
      tool(async () => {
        const { runId } = (await call('graph.execute', defined(params))) as { runId: string };
        if (wait === false) return { runId };
        return waitForRun(call, runId, options.graphWaitMs ?? 600_000, options.graphPollMs ?? 250);
      }),
  );
}

/** The agents and sessions as resources. */
function registerResources(
  server: McpServer,
  call: GatewayCall,
  ResourceTemplate: typeof import('@modelcontextprotocol/sdk/server/mcp.js').ResourceTemplate,
): void {
  server.registerResource(
    'agents',
    'agentd://agents',
    { description: 'The agent ids (needs an admin token).', mimeType: 'application/json' },
    async (uri) => jsonResource(uri.href, await call('agents.list', {})),
  );
  server.registerResource(
    'sessions',
    'agentd://sessions',
    { description: 'Sessions, most recently active first.', mimeType: 'application/json' },
    async (uri) => jsonResource(uri.href, await call('session.list', { limit: 100 })),
  );
  server.registerResource(
    'session',
    new ResourceTemplate('agentd://sessions/{sessionKey}', {
      list: async () => {
        const { sessions } = (await call('session.list', { limit: 100 })) as {
          sessions: Array<{ sessionKey: string; agentId?: string }>;
        };
        return {
          resources: sessions.map((session) => ({
            uri: `agentd://sessions/${encodeURIComponent(session.sessionKey)}`,
            name: session.sessionKey,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    { description: 'The messages of one session.', mimeType: 'application/json' },
    async (uri, variables) => {
      const raw = variables.sessionKey;
      const key = decodeURIComponent(Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''));
      return jsonResource(uri.href, await call('session.history', { key }));
    },
  );
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** Polls a graph run until it finishes (or `maxWaitMs` passes), then answers its status and outputs. */
async function waitForRun(call: GatewayCall, runId: string, maxWaitMs: number, pollMs: number) {
  const until = Date.now() + maxWaitMs;
  for (;;) {
    const status = (await call('graph.status', { runId })) as { status: string };
    if (FINISHED.has(status.status) || Date.now() >= until) {
      const { outputs } = (await call('graph.outputs', { runId })) as { outputs: unknown };
      return { runId, status: status.status, finished: FINISHED.has(status.status), outputs };
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
