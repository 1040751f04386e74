import type { AgentTurnResult } from '@agentd/contracts';
import type { Dialect } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import type { SubagentTurnRequest as TurnRequest } from '../src/index.js';
import { autonomyDataFixture } from '../src/testing.js';

/** One turn the scripted runner holds until the test settles it (or the turn's signal aborts it). */
export interface HeldTurn {
  request: TurnRequest;
  finish(response?: string, tokens?: number, finishReason?: string): void;
  fail(error: Error): void;
}

/**
 * A turn runner for unit tests: every turn waits until the test finishes it, and rejects as
 * the runtime does when its signal aborts. `auto` answers turns at once instead.
 */
export function scriptedRunner(auto?: (request: TurnRequest) => string) {
  const held: HeldTurn[] = [];
  const waiters: Array<() => void> = [];
  const runner = {
    held,
    async runTurn(request: TurnRequest): Promise<AgentTurnResult> {
      const sessionKey = request.sessionKey ?? 'none';
      if (auto) {
        return {
          response: auto(request),
          tokensUsed: { input: 3, output: 2, total: 5 },
          finishReason: 'stop',
          sessionKey,
        };
      }
      return new Promise((resolve, reject) => {
        const turn: HeldTurn = {
          request,
          finish: (response = 'done', tokens = 10, finishReason = 'stop') =>
            resolve({
              response,
              tokensUsed: { input: tokens - 4, output: 4, total: tokens },
              finishReason,
              sessionKey,
            }),
          fail: reject,
        };
        request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        held.push(turn);
        for (const wake of waiters.splice(0)) wake();
      });
    },
    /** The next held turn for `sessionKey` (waits for it). */
    async turnOf(sessionKey: string): Promise<HeldTurn> {
      for (;;) {
        const index = held.findIndex((turn) => turn.request.sessionKey === sessionKey);
        if (index >= 0) return held.splice(index, 1)[0] as HeldTurn;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
  return runner;
}

/**
 * The data-dir fixture of `@agentd/autonomy/testing` with the tools these tests give agents:
 * `ghost` is unknown, `narrow` may only list, every other agent may echo, list and spawn.
 */
export function autonomyFixture(dialect: Dialect = 'libsql') {
  return autonomyDataFixture(
    'agentd-autonomy-',
    (agentId) =>
      agentId === 'ghost'
        ? undefined
        : agentId === 'narrow'
          ? ['subagent_list']
          : ['echo', 'subagent_list', 'subagent_spawn'],
    dialect,
  );
}

/** The dialects the suites run on: libsql always, PostgreSQL when its suites are enabled. */
export const DIALECTS: Dialect[] = pgSuitesEnabled() ? ['libsql', 'pg'] : ['libsql'];

/** Polls until `check` answers a value. */
export { eventually as until } from '@agentd/test-support';
