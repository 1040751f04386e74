import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { backoffDelay } from '@agentd/async-control';
import type { Logger } from '@agentd/contracts';
import type { McpServerEntry } from '../config.js';
import { AgentdMcpError } from '../errors.js';
import {
  type Asker,
  clientCapabilities,
  handleClientRequests,
  type McpClientHooks,
} from './client-requests.js';

/** The SDK's `ErrorCode.ConnectionClosed` and `ErrorCode.RequestTimeout` (its enum is not loaded up front). */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/** Where a server is in its life. */
export type McpServerState = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed';

/** What one connection reports to its host. */
export interface ConnectionEvents {
  /** The server's tool list, after each connect and each list-changed notification. */
  onTools(tools: Tool[]): void;
  /** The server went away unexpectedly (a stdio process exited, an HTTP server stopped answering). */
  onLost(reason: string): void;
}

/** Backoff of reconnects: the first delay, doubled per failure up to the cap. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/**
 * One configured MCP server: connects (spawning a stdio server), lists its tools, calls them
 * under a timeout, refreshes the list on the server's list-changed notification, and after an
 * unexpected loss reconnects with exponential backoff (a crashed stdio server is spawned again).
 */
export class ServerConnection {
  state: McpServerState = 'idle';
  lastError: string | undefined;
  /** Unexpected losses since the host started (each followed by a reconnect). */
  restarts = 0;
  connectedAt: number | undefined;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #failures = 0;
  #closing = false;
  /** The turns whose calls of this server's tools are in flight. */
  readonly #callers = new Set<Required<Asker>>();
  /** Tools the server runs only as tasks (`execution.taskSupport: 'required'`), as last listed. */
  #taskTools = new Set<string>();

  constructor(
    readonly id: string,
    readonly entry: McpServerEntry,
    private readonly events: ConnectionEvents,
    private readonly logger: Logger,
    private readonly backoff: Backoff,
    private readonly now: () => number,
    private readonly hooks: McpClientHooks = {},
  ) {}

  /** The latest caller, when every call in flight is one agent's (whom a server's request is for). */
  asker(): Asker | undefined {
    const callers = [...this.#callers];
    const agents = new Set(callers.map((caller) => caller.agentId));
    return agents.size === 1 ? callers.at(-1) : undefined;
  }

  /** `stdio` or `http`. */
  get transport(): 'stdio' | 'http' {
    return 'command' in this.entry ? 'stdio' : 'http';
  }

  /** The connected client, connecting first when needed (a lazy server's first use). */
  connect(): Promise<Client> {
    if (this.#closing) return Promise.reject(this.#error('SERVER_UNAVAILABLE', 'is shut down'));
    if (this.#client) return Promise.resolve(this.#client);
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  /**
   * Calls a tool for a turn (a tool that requires task augmentation as a task, polled to its
   * end); a loss of the server during the call, a timeout or a tool error reject.
   */
  async call(tool: string, input: unknown, caller: Required<Asker>): Promise<CallToolResult> {
    const { signal } = caller;
    const client = await this.connect();
    const params = { name: tool, arguments: (input ?? {}) as Record<string, unknown> };
    const options = { timeout: this.entry.callTimeoutMs, signal };
    this.#callers.add(caller);
    try {
      if (this.#taskTools.has(tool)) return await callAsTask(client, params, options);
      return (await client.callTool(params, undefined, options)) as CallToolResult;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (signal.aborted) throw error;
      const code = (error as { code?: unknown }).code;
      if (code === REQUEST_TIMEOUT) {
        throw this.#error('CALL_TIMEOUT', `did not answer ${tool} within ${this.entry.callTimeoutMs} ms`);
      }
      // The SDK's ConnectionClosed (a stdio process gone), or fetch failing to reach an HTTP server.
      const gone = code === CONNECTION_CLOSED || error instanceof TypeError || this.#client !== client;
      if (gone) {
        // Report the loss, and make sure a reconnect is on its way.
        if (this.#client === client) this.#lost(client, message.slice(0, 300));
        throw this.#error('SERVER_UNAVAILABLE', `went away during ${tool}; it is being restarted`);
      }
      throw this.#error('CALL_FAILED', `failed ${tool}: ${message.slice(0, 300)}`);
    } finally {
      this.#callers.delete(caller);
    }
  }

  /**
   * Lets the server go until the next call (a lazy server after its tools were listed): a
   * stdio process is stopped, not reported as lost and not restarted.
   */
  async idle(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.#client = undefined;
    this.state = 'idle';
    await client.close().catch(() => undefined);
  }

  /** Stops the server for good (config change, shutdown). */
  async close(): Promise<void> {
    this.#closing = true;
    this.state = 'closed';
    clearTimeout(this.#retryTimer);
    const client = this.#client ?? (await this.#connecting?.catch(() => undefined));
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }

  async #open(): Promise<Client> {
    this.state = this.restarts > 0 || this.#failures > 0 ? 'reconnecting' : 'connecting';
    const [{ Client }, transport] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      this.#transport(),
    ]);
    const client = new Client(
      { name: 'agentd', version: '0.1.0' },
      { capabilities: clientCapabilities(this.hooks) },
    );
    await handleClientRequests(client, {
      id: this.id,
      entry: this.entry,
      hooks: this.hooks,
      asker: () => this.asker(),
    });
    const timer = setTimeout(
      () => void transport.close().catch(() => undefined),
      this.entry.connectTimeoutMs,
    );
    try {
      await client.connect(transport, { timeout: this.entry.connectTimeoutMs });
      const tools = await listAll(client, this.entry.connectTimeoutMs);
      clearTimeout(timer);
      if (this.#closing) {
        await client.close().catch(() => undefined);
        throw this.#error('SERVER_UNAVAILABLE', 'is shut down');
      }
      const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#refresh(client));
      client.onclose = () => {
        if (this.#client === client)
          this.#lost(
            client,
            this.transport === 'stdio' ? 'the server process exited' : 'the connection closed',
          );
      };
      this.#client = client;
      this.#failures = 0;
      this.state = 'connected';
      this.connectedAt = this.now();
      this.lastError = undefined;
      this.#listed(tools);
      this.logger.info({ serverId: this.id, tools: tools.length }, 'mcp server connected');
      return client;
    } catch (error) {
      clearTimeout(timer);
      await client.close().catch(() => undefined);
      if (this.#closing) throw error;
      this.#failures++;
      this.state = 'reconnecting';
      const message = error instanceof Error ? error.message : String(error);
      this.lastError = `connect failed: ${message.slice(0, 300)}`;
      this.#scheduleRetry();
      throw this.#error('SERVER_UNAVAILABLE', `could not be reached: ${message.slice(0, 300)}`);
    }
  }

  async #transport(): Promise<Transport> {
    const entry = this.entry;
    if ('command' in entry) {
      const { StdioClientTransport, getDefaultEnvironment } = await import(
        '@modelcontextprotocol/sdk/client/stdio.js'
      );
      const transport = new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        // Only the SDK's safe defaults (PATH, HOME, ...) and the configured values: the daemon's
        // own environment (tokens, keys) is not handed to a third-party server.
        env: { ...getDefaultEnvironment(), ...entry.env },
        ...(entry.cwd !== undefined ? { cwd: entry.cwd } : {}),
        stderr: 'pipe',
      });
      // Drained and dropped: the server's stderr may print its secrets, and a full pipe would stall it.
      transport.stderr?.on('data', () => undefined);
      return transport;
    }
    const { StreamableHTTPClientTransport } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    );
    return new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } });
  }

  #lost(client: Client, reason: string): void {
    if (this.#closing || this.#client !== client) return;
    this.#client = undefined;
    this.restarts++;
    this.state = 'reconnecting';
    this.lastError = reason;
    void client.close().catch(() => undefined);
    this.logger.warn(
      {
        serverId: this.id,
        restarts: this.restarts,
        hint: `MCP server ${this.id} went away (${reason}); agentd reconnects with backoff, check the server if it keeps happening`,
        errorKind: 'dependency',
      },
      'mcp server lost',
    );
    this.events.onLost(reason);
    this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    if (this.#closing || this.#retryTimer) return;
    const delay = backoffDelay(this.#failures, this.backoff);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.connect().catch(() => undefined);
    }, delay);
    this.#retryTimer.unref();
  }

  async #refresh(client: Client): Promise<void> {
    try {
      const tools = await listAll(client, this.entry.connectTimeoutMs);
      if (this.#client === client) this.#listed(tools);
    } catch (error) {
      this.lastError = `tool list refresh failed: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`;
    }
  }

  #listed(tools: Tool[]): void {
    this.#taskTools = new Set(
      tools.filter((tool) => tool.execution?.taskSupport === 'required').map((tool) => tool.name),
    );
    this.events.onTools(tools);
  }

  #error(code: 'SERVER_UNAVAILABLE' | 'CALL_TIMEOUT' | 'CALL_FAILED', text: string): AgentdMcpError {
    return new AgentdMcpError(code, `MCP server ${this.id} ${text}`, { data: { serverId: this.id } });
  }
}

/** Every page of the server's tool list. */
async function listAll(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
    tools.push(...listed.tools);
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

/**
 * Calls a tool that requires task augmentation: the server answers a task at once, which the
 * SDK polls (`tasks/get`) until it ends and then fetches its result (`tasks/result`). The
 * timeout bounds each request, the signal the whole wait.
 */
async function callAsTask(
  client: Client,
  params: { name: string; arguments: Record<string, unknown> },
  options: { timeout: number; signal: AbortSignal },
): Promise<CallToolResult> {
  for await (const message of client.experimental.tasks.callToolStream(params, undefined, options)) {
    if (message.type === 'result') return message.result as CallToolResult;
    if (message.type === 'error') throw message.error;
  }
  throw new Error(`the task of ${params.name} ended without a result`);
}
