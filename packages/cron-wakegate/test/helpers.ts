import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import type { AgentTurnRequest, AgentTurnResult, AgentTurnRunner } from '../src/index.js';

/** A temp data dir with a real libsql file. */
export async function tempDatabase(): Promise<{
  db: Database;
  dir: string;
  reopen(): Promise<Database>;
  cleanup(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-cron-'));
  const opened: Database[] = [];
  const open = async () => {
    const db = await openDatabase({ dataDir: dir });
    opened.push(db);
    return db;
  };
  const db = await open();
  return {
    db,
    dir,
    reopen: open,
    cleanup: async () => {
      for (const handle of opened) await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A runner whose behaviour each test scripts; it keeps every request it got. */
export interface ScriptedRunner extends AgentTurnRunner {
  requests: AgentTurnRequest[];
  /** Replaces the behaviour of later turns. */
  respond(behaviour: (request: AgentTurnRequest) => Promise<AgentTurnResult>): void;
}

export function scriptedRunner(): ScriptedRunner {
  let behaviour = async (request: AgentTurnRequest): Promise<AgentTurnResult> =>
    ok(`done: ${request.message.length}`);
  const requests: AgentTurnRequest[] = [];
  return {
    requests,
    respond(next) {
      behaviour = next;
    },
    runTurn(request) {
      requests.push(request);
      return behaviour(request);
    },
  };
}

export function ok(response: string, sessionKey = 'cron:x'): AgentTurnResult {
  return { response, tokensUsed: { input: 3, output: 4, total: 7 }, finishReason: 'stop', sessionKey };
}

/** A promise with its resolve function, for runs that end when the test says so. */
export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** Fakes only the timer functions and Date; setImmediate stays real so libsql I/O and idle() settle. */
export const FAKE_TIMERS: {
  toFake: Array<'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval' | 'Date'>;
} = { toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] };
