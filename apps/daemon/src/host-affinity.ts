import { type AgentRuntime, DEFAULT_AGENT_ID } from '@agentd/agent-runtime';
import type { BrowserService } from '@agentd/browser';
import { type AnyMethod, type MethodContext, RpcError } from '@agentd/rpc-core';
import type { HostAffinity, Placement } from '@agentd/storage';
import { isTerminalError, type TerminalService } from '@agentd/terminal';

/**
 * Wiring of host affinity (see `openHostAffinity` in @agentd/storage): which calls name
 * something host-bound, and the `-32010 INSTANCE_AFFINITY` answer when it lives on another
 * instance. On libsql every placement is `here`, so nothing here changes a single daemon.
 */

/** The tools that act on this host: an agent offered any of them gets a home instance. */
const HOST_TOOL = /^(?:terminal_|browser_|workspace_|orchestrate$)/;

/** The handle kinds recorded with their instance. */
export const HANDLE_KINDS = { browserTab: 'browser-tab', terminal: 'terminal' } as const;

function refuseElsewhere(what: string, placement: Placement): void {
  if (placement.where === 'elsewhere') throw RpcError.instanceAffinity(what, placement);
}

/** Whether `agentId` may use a tool that acts on this host (workspace, terminal, browser, orchestrate). */
export function needsHome(runtime: AgentRuntime, agentId: string): boolean {
  const hostTools = runtime.toolNames().filter((name) => HOST_TOOL.test(name));
  return hostTools.length > 0 && runtime.toolsDenied(agentId, hostTools).length < hostTools.length;
}

/**
 * Refuses a turn of an agent whose home is another instance (its tools reach that host's
 * files, drives and browser); takes the home when nobody holds it.
 */
export async function requireHome(
  affinity: HostAffinity,
  runtime: AgentRuntime,
  agentId: string | undefined,
): Promise<void> {
  const id = agentId ?? DEFAULT_AGENT_ID;
  if (affinity.holdsHome(id) || !needsHome(runtime, id)) return;
  refuseElsewhere(`Agent ${id} (its home instance)`, await affinity.home(id));
}

/** Whether this instance may run a scheduled turn of `agentId`: not when it is homed elsewhere. */
export async function firesHere(
  affinity: HostAffinity,
  runtime: AgentRuntime,
  agentId: string,
): Promise<boolean> {
  if (affinity.holdsHome(agentId) || !needsHome(runtime, agentId)) return true;
  return (await affinity.home(agentId)).where !== 'elsewhere';
}

/**
 * Methods that start a turn of the agent their params name (`agentId`, else the default
 * agent) in a new session, answered before the turn runs: a spawn answers its run id at once.
 * Every other turn is checked by the runtime's turn placement, against the agent that runs it.
 */
const AGENT_TURN_METHODS = new Set(['session.spawn']);

/**
 * Adds the home check to the methods that start a sub-agent or touch an agent's workspace: a
 * call for an agent homed on another instance answers `-32010` with that instance's URL.
 */
export function withHomes(methods: AnyMethod[], affinity: HostAffinity, runtime: AgentRuntime): AnyMethod[] {
  return methods.map((method) => {
    const turn = AGENT_TURN_METHODS.has(method.name);
    // The workspace is files on the home's disk, whatever tools the agent has.
    const workspace = method.name.startsWith('workspace.');
    if (!turn && !workspace) return method;
    return {
      ...method,
      handler: async (params: unknown, context: MethodContext) => {
        const agentId = (params as { agentId?: string } | undefined)?.agentId;
        if (turn) await requireHome(affinity, runtime, agentId);
        else if (agentId !== undefined)
          refuseElsewhere(`Workspace of ${agentId}`, await affinity.home(agentId));
        return method.handler(params, context);
      },
    };
  });
}

/**
 * The browser with its tabs recorded with this instance: a tab opened here and named on another
 * instance (`browser.focus`, `browser.close`) answers `-32010` there. The RPC methods and the
 * agents' browser tools both use this object.
 */
export function hostBoundBrowser(browser: BrowserService, affinity: HostAffinity): BrowserService {
  const kind = HANDLE_KINDS.browserTab;
  const placed = async (tabId: string) =>
    refuseElsewhere(`Browser tab ${tabId}`, await affinity.locate(kind, tabId));
  return {
    ...browser,
    get profileDir() {
      return browser.profileDir;
    },
    get pid() {
      return browser.pid;
    },
    async open(params, call) {
      const opened = await browser.open(params, call);
      await affinity.record(kind, opened.tabId);
      return opened;
    },
    async focus(params, call) {
      await placed(params.tabId);
      return browser.focus(params, call);
    },
    async close(params, call) {
      await placed(params.tabId);
      const closed = await browser.close(params, call);
      await affinity.forget(kind, params.tabId);
      return closed;
    },
    async stop() {
      const stopped = await browser.stop();
      await affinity.forgetAll(kind);
      return stopped;
    },
  };
}

/**
 * The terminal with its drives recorded with this instance: a drive id unknown here but open on
 * another instance answers `-32010` naming it, instead of "not found".
 */
export function hostBoundTerminal(terminal: TerminalService, affinity: HostAffinity): TerminalService {
  const kind = HANDLE_KINDS.terminal;
  // Drives are each agent's own: the key names the agent, so another agent learns nothing.
  const key = (agentId: string, sessionId: string) => `${agentId}/${sessionId}`;
  const placed = async <T>(agentId: string, sessionId: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      if (isTerminalError(error) && error.code === 'SESSION_NOT_FOUND') {
        refuseElsewhere(`Terminal drive ${sessionId}`, await affinity.locate(kind, key(agentId, sessionId)));
      }
      throw error;
    }
  };
  return {
    ...terminal,
    async open(agentId, params, context) {
      const opened = await terminal.open(agentId, params, context);
      await affinity.record(kind, key(agentId, opened.sessionId));
      if (opened.evicted !== undefined) await affinity.forget(kind, key(agentId, opened.evicted));
      return opened;
    },
    send: (agentId, sessionId, params, context) =>
      placed(agentId, sessionId, () => terminal.send(agentId, sessionId, params, context)),
    read: (agentId, sessionId, params) =>
      placed(agentId, sessionId, () => terminal.read(agentId, sessionId, params)),
    wait: (agentId, sessionId, params, context) =>
      placed(agentId, sessionId, () => terminal.wait(agentId, sessionId, params, context)),
    async close(agentId, sessionId) {
      const closed = await placed(agentId, sessionId, () => terminal.close(agentId, sessionId));
      await affinity.forget(kind, key(agentId, sessionId));
      return closed;
    },
  };
}
