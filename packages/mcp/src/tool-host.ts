import type { AgentTool, Logger, ToolContext } from '@agentd/contracts';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpServerEntry, McpSection } from './config.js';
import { AgentdMcpError } from './errors.js';
import type { McpClientHooks } from './internal/client-requests.js';
import { type Backoff, type McpServerState, ServerConnection } from './internal/server-connection.js';

/** Where the host puts the tools: the agent runtime's tool runner. */
export interface McpToolRegistry {
  /** Adds tools; throws for a name already taken. */
  register(tools: AgentTool[]): void;
  /** Removes tools by name. */
  unregister(names: readonly string[]): void;
}

/** Options of {@link createMcpToolHost}. */
export interface McpToolHostOptions {
  /** `mcp.servers`. */
  servers: McpSection['servers'];
  /** The runtime's tools. */
  tools: McpToolRegistry;
  /** Resolves secret references in an entry's `env` and `headers`. @default the entry as it is */
  resolveSecrets?: ((entry: McpServerEntry) => Promise<McpServerEntry>) | undefined;
  /** Reconnect delays. @default {initialMs: 500, maxMs: 30000} */
  backoff?: Backoff | undefined;
  /** @default a no-op logger */
  logger?: Logger | undefined;
  /** @default Date.now */
  now?: (() => number) | undefined;
  /** What servers may ask of agentd: roots, sampling, elicitation (see {@link McpClientHooks}). @default none */
  client?: McpClientHooks | undefined;
}

/** One server as `gateway.status` shows it. */
export interface McpServerStatus {
  id: string;
  transport: 'stdio' | 'http';
  enabled: boolean;
  state: McpServerState | 'disabled';
  /** Its tools as agents see them (`<id>__<tool>`). */
  tools: string[];
  /** Agents allowed to use them. */
  agents: string[];
  lastError: string | null;
  /** Unexpected losses (crashes) followed by a reconnect. */
  restarts: number;
  connectedAt: number | null;
}

/** The configured MCP servers and the agent tools they provide. */
export interface McpToolHost {
  /** Connects eager servers and lists lazy ones' tools, in the background; never rejects. */
  start(): Promise<void>;
  /** Applies a changed `mcp.servers`: changed and removed servers are stopped, new ones started. */
  apply(servers: McpSection['servers']): Promise<void>;
  /** Each server's state, tools and last error. */
  status(): McpServerStatus[];
  /** Stops every server and withdraws their tools. */
  close(): Promise<void>;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const noop = (): void => {};
const noopLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

interface Hosted {
  entry: McpServerEntry;
  /** The entry as configured (references unresolved), to tell a changed entry. */
  configured: string;
  connection: ServerConnection | undefined;
  tools: string[];
  lastError: string | null;
}

/** The model's input schema of a server's tool: its JSON Schema as zod, or any object when it cannot be. */
function paramsOf(tool: Tool): z.ZodType {
  try {
    return z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return z.looseObject({});
  }
}

/** A content part other than text, as the model reads it: an image is attached, media noted, links kept. */
function partOf(part: CallToolResult['content'][number], context: ToolContext): string {
  if (part.type === 'text') return part.text;
  if (part.type === 'image') {
    if (context.attachImages) {
      context.attachImages([{ data: part.data, mediaType: part.mimeType }]);
      return `[${part.mimeType} image, attached]`;
    }
    return `[${part.mimeType} image, not shown]`;
  }
  if (part.type === 'audio') return `[${part.mimeType} audio, not shown]`;
  if (part.type === 'resource_link') return JSON.stringify(part);
  const { resource } = part;
  return 'text' in resource
    ? resource.text
    : `[${resource.mimeType ?? 'binary'} resource ${resource.uri}, not shown]`;
}

/**
 * What a tool call gives the model: structured content, else its parts as text. Images are
 * attached to the call (the model sees them as images), never put in the text as base64.
 */
function resultOf(result: CallToolResult, name: string, context: ToolContext): unknown {
  const texts = result.content.filter((part) => part.type === 'text').map((part) => part.text);
  if (result.isError) throw new Error(texts.join('\n').slice(0, 2000) || `${name} reported an error`);
  const parts = result.content.map((part) => partOf(part, context));
  if (result.structuredContent !== undefined) return result.structuredContent;
  return parts.join('\n');
}

/**
 * The agent tools of a server's tool list, named `<id>__<tool>`; tools whose full name the
 * runtime cannot take are added to `skipped`. They are offered only to the server's `agents`,
 * and a call from another agent is refused before it reaches the server.
 */
function agentToolsOf(
  id: string,
  server: Hosted,
  connection: ServerConnection,
  tools: Tool[],
  skipped: string[],
): AgentTool[] {
  const agentTools: AgentTool[] = [];
  for (const tool of tools) {
    const name = `${id}__${tool.name}`;
    if (!TOOL_NAME.test(name)) {
      skipped.push(tool.name);
      continue;
    }
    agentTools.push({
      name,
      description: `[MCP ${id}] ${tool.description ?? tool.title ?? tool.name}`.slice(0, 4000),
      params: paramsOf(tool),
      // Offered only to these agents (the runtime's allow-list gate refuses the others too).
      agents: server.entry.agents,
      handler: async (params: unknown, context: ToolContext) => {
        // Kept for runtimes that do not read `agents`.
        const allowed = server.entry.agents;
        if (!allowed.includes('*') && !allowed.includes(context.agentId)) {
          throw new AgentdMcpError('NOT_ALLOWED', `Agent ${context.agentId} may not use MCP server ${id}`, {
            data: { serverId: id },
          });
        }
        const caller = { agentId: context.agentId, sessionKey: context.sessionKey, signal: context.signal };
        return resultOf(await connection.call(tool.name, params, caller), name, context);
      },
    });
  }
  return agentTools;
}

/**
 * Creates the host of `mcp.servers`: each enabled server's tools become agent tools named
 * `<id>__<tool>` (with the server's JSON Schema as parameters), running through the tool
 * runner's gates like any tool, so allow-lists, denylists, approvals, breakers and the
 * per-call evidence record apply. An `eager` server is connected at start and kept up; a
 * `lazy` one is connected once to list its tools, then stopped until a call needs it.
 */
export function createMcpToolHost(options: McpToolHostOptions): McpToolHost {
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const backoff = options.backoff ?? { initialMs: 500, maxMs: 30_000 };
  const resolve = options.resolveSecrets ?? (async (entry: McpServerEntry) => entry);
  const hosted = new Map<string, Hosted>();

  const withdraw = (server: Hosted): void => {
    options.tools.unregister(server.tools);
    server.tools = [];
  };

  const publish = (id: string, server: Hosted, connection: ServerConnection, tools: Tool[]): void => {
    withdraw(server);
    const skipped: string[] = [];
    for (const tool of agentToolsOf(id, server, connection, tools, skipped)) {
      try {
        options.tools.register([tool]);
        server.tools.push(tool.name);
      } catch {
        skipped.push(tool.name);
      }
    }
    server.lastError =
      skipped.length > 0 ? `tools not offered (bad or taken names): ${skipped.join(', ')}` : null;
  };

  const launch = async (id: string, server: Hosted): Promise<void> => {
    let entry: McpServerEntry;
    try {
      entry = await resolve(server.entry);
    } catch (error) {
      server.lastError = `secret references could not be resolved: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    if (hosted.get(id) !== server) return;
    const connection: ServerConnection = new ServerConnection(
      id,
      entry,
      {
        onTools: (tools) => publish(id, server, connection, tools),
        onLost: noop,
      },
      logger,
      backoff,
      now,
      options.client,
    );
    server.connection = connection;
    try {
      await connection.connect();
      if (entry.start === 'lazy') await connection.idle();
    } catch {
      // Recorded on the connection (lastError) and retried with backoff.
    }
  };

  const add = (id: string, entry: McpServerEntry): Promise<void> => {
    const server: Hosted = {
      entry,
      configured: JSON.stringify(entry),
      connection: undefined,
      tools: [],
      lastError: null,
    };
    hosted.set(id, server);
    return entry.enabled ? launch(id, server) : Promise.resolve();
  };

  const remove = async (id: string, server: Hosted): Promise<void> => {
    hosted.delete(id);
    withdraw(server);
    await server.connection?.close();
  };

  return {
    async start() {
      await Promise.all(Object.entries(options.servers).map(([id, entry]) => add(id, entry)));
    },
    async apply(servers) {
      const next = new Map(Object.entries(servers));
      const stopping: Promise<void>[] = [];
      for (const [id, server] of hosted) {
        const entry = next.get(id);
        if (entry === undefined || JSON.stringify(entry) !== server.configured)
          stopping.push(remove(id, server));
      }
      await Promise.all(stopping);
      await Promise.all([...next].filter(([id]) => !hosted.has(id)).map(([id, entry]) => add(id, entry)));
    },
    status() {
      return [...hosted].map(([id, server]) => {
        const connection = server.connection;
        return {
          id,
          transport: 'command' in server.entry ? ('stdio' as const) : ('http' as const),
          enabled: server.entry.enabled,
          state: server.entry.enabled ? (connection?.state ?? 'connecting') : ('disabled' as const),
          tools: [...server.tools],
          agents: [...server.entry.agents],
          lastError: connection?.lastError ?? server.lastError,
          restarts: connection?.restarts ?? 0,
          connectedAt: connection?.connectedAt ?? null,
        };
      });
    },
    async close() {
      await Promise.all([...hosted].map(([id, server]) => remove(id, server)));
    },
  };
}
