import type { ToolBreakerSettings } from './config.js';

/** The transitions a tool breaker reports (`tool:breaker` event `event` field). */
export type ToolBreakerEvent = 'opened' | 'half_open' | 'closed';

/**
 * Error kinds of a tool call that say the tool itself is unhealthy. Refusals before the tool
 * ran (`unknown_tool`, `denied`, `invalid_input`, `breaker_open`) and calls cut off by the
 * end of the turn (`cancelled`) say nothing about the tool, so they never move a breaker.
 */
export const UNHEALTHY_TOOL_ERROR_KINDS: ReadonlySet<string> = new Set(['tool_error', 'timeout']);

/** Sessions whose breaker state is kept; the least recently used beyond this is forgotten. */
export const TOOL_BREAKER_MAX_SESSIONS = 1024;

/** What {@link ToolBreakers.admit} decides for one call. */
export type BreakerAdmission =
  | { allowed: true; transition?: { event: 'half_open'; consecutiveFailures: number } }
  | { allowed: false; consecutiveFailures: number; retryInMs: number };

/** A transition caused by the result of a call. */
export interface BreakerTransition {
  event: 'opened' | 'closed';
  /** Consecutive unhealthy failures after the transition (0 when it closed). */
  consecutiveFailures: number;
}

interface BreakerState {
  /** Consecutive unhealthy failures since the last success. */
  failures: number;
  /** Set while open: when it opened (epoch ms). */
  openedAt: number | undefined;
  /** The cooldown is over and the next call is the trial. */
  halfOpen: boolean;
}

/**
 * Circuit breakers per (session, tool), in memory. Only tools with failures on record take
 * room (a tool back at zero failures is dropped), and at most
 * {@link TOOL_BREAKER_MAX_SESSIONS} sessions are kept, least recently used evicted first, so
 * a long-running daemon cannot grow without bound. Calls of one session are serialised by
 * the runtime, so there is never more than one trial call in flight per breaker.
 */
export class ToolBreakers {
  readonly #sessions = new Map<string, Map<string, BreakerState>>();
  readonly #maxSessions: number;

  constructor(maxSessions: number = TOOL_BREAKER_MAX_SESSIONS) {
    this.#maxSessions = maxSessions;
  }

  /** Sessions with breaker state (for tests and diagnostics). */
  get size(): number {
    return this.#sessions.size;
  }

  /** Whether a call of `toolName` may run now; moves an open breaker past its cooldown to half-open. */
  admit(sessionKey: string, toolName: string, settings: ToolBreakerSettings, at: number): BreakerAdmission {
    if (settings.failureThreshold === 0) return { allowed: true };
    const state = this.#touch(sessionKey)?.get(toolName);
    if (!state || state.openedAt === undefined) return { allowed: true };
    if (state.halfOpen) return { allowed: true };
    const elapsed = at - state.openedAt;
    if (elapsed >= settings.cooldownMs) {
      state.halfOpen = true;
      return { allowed: true, transition: { event: 'half_open', consecutiveFailures: state.failures } };
    }
    return {
      allowed: false,
      consecutiveFailures: state.failures,
      retryInMs: Math.max(0, settings.cooldownMs - elapsed),
    };
  }

  /**
   * Records the result of a call that ran: `ok`, or the error kind it failed with. Returns the
   * transition it caused, if any. Error kinds outside {@link UNHEALTHY_TOOL_ERROR_KINDS} leave
   * the breaker as it is (a half-open breaker then waits for the next trial).
   */
  record(
    sessionKey: string,
    toolName: string,
    settings: ToolBreakerSettings,
    errorKind: string | undefined,
    at: number,
  ): BreakerTransition | undefined {
    if (settings.failureThreshold === 0) {
      this.#sessions.get(sessionKey)?.delete(toolName);
      return undefined;
    }
    const tools = this.#sessions.get(sessionKey);
    const state = tools?.get(toolName);
    if (errorKind === undefined) {
      if (!state) return undefined;
      this.#drop(sessionKey, toolName);
      return state.openedAt !== undefined ? { event: 'closed', consecutiveFailures: 0 } : undefined;
    }
    if (!UNHEALTHY_TOOL_ERROR_KINDS.has(errorKind)) return undefined;
    const next = state ?? { failures: 0, openedAt: undefined, halfOpen: false };
    next.failures += 1;
    if (!state) this.#store(sessionKey, toolName, next);
    if (next.openedAt !== undefined && !next.halfOpen) return undefined;
    if (next.halfOpen || next.failures >= settings.failureThreshold) {
      next.openedAt = at;
      next.halfOpen = false;
      return { event: 'opened', consecutiveFailures: next.failures };
    }
    return undefined;
  }

  /** Forgets every breaker of a session (session delete and reset). */
  forget(sessionKey: string): void {
    this.#sessions.delete(sessionKey);
  }

  #touch(sessionKey: string): Map<string, BreakerState> | undefined {
    const tools = this.#sessions.get(sessionKey);
    if (tools) {
      this.#sessions.delete(sessionKey);
      this.#sessions.set(sessionKey, tools);
    }
    return tools;
  }

  #store(sessionKey: string, toolName: string, state: BreakerState): void {
    const tools = this.#touch(sessionKey) ?? new Map<string, BreakerState>();
    tools.set(toolName, state);
    this.#sessions.set(sessionKey, tools);
    while (this.#sessions.size > this.#maxSessions) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest === undefined) break;
      this.#sessions.delete(oldest);
    }
  }

  #drop(sessionKey: string, toolName: string): void {
    const tools = this.#sessions.get(sessionKey);
    if (!tools) return;
    tools.delete(toolName);
    if (tools.size === 0) this.#sessions.delete(sessionKey);
  }
}
