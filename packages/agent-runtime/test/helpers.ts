import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SESSION_INDEX_DIR,
  type SessionIndexRecord,
  sessionIndexRecordSchema,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
  trajectoryRecordSchema,
} from '@agentd/evidence';
import type { Database, Dialect } from '@agentd/storage';
import { openTestDatabase } from '@agentd/storage/testing';
import { onTestFinished } from 'vitest';
import { z } from 'zod';
import {
  type AgentRuntime,
  type AgentRuntimeLogger,
  type AgentTool,
  type AgentRuntimeOptions,
  createAgentRuntime,
  type ModelRequest,
  type OfflineScript,
  type ToolContext,
} from '../src/index.js';

/** A runtime on a real database (a libsql file in a temp dir, or PostgreSQL). */
export interface TestRuntime {
  runtime: AgentRuntime;
  db: Database;
  dir: string;
  close(): Promise<void>;
}

/**
 * Starts a runtime on a fresh temp dir (and a fresh database of `dialect`); it is closed and its dir removed when the test that
 * started it ends (so test files need no cleanup hook of their own).
 */
export async function startRuntime(
  options: Partial<Omit<AgentRuntimeOptions, 'db' | 'dataDir'>> = {},
  dialect: Dialect = 'libsql',
): Promise<TestRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-runtime-'));
  const db = await openTestDatabase(dialect, dir);
  const runtime = createAgentRuntime({ db, dataDir: dir, ...options });
  await runtime.start();
  let closing: Promise<void> | undefined;
  const started: TestRuntime = {
    runtime,
    db,
    dir,
    // Closing twice (a test, then the end of the test) closes once.
    close: () => {
      closing ??= (async () => {
        await runtime.close();
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
  onTestFinished(() => started.close());
  return started;
}

/** Every session-index record written under `dir`, validated by the exported schema. */
export function readSessionIndex(dir: string): SessionIndexRecord[] {
  const folder = join(dir, SESSION_INDEX_DIR);
  return readdirSync(folder)
    .sort()
    .flatMap((file) =>
      readFileSync(join(folder, file), 'utf8')
        .trim()
        .split('\n')
        .map((line) => sessionIndexRecordSchema.parse(JSON.parse(line))),
    );
}

/** The trajectory of one session, validated by the exported schema. */
export function readTrajectory(dir: string, sessionKey: string): TrajectoryRecord[] {
  return readFileSync(join(dir, TRAJECTORY_DIR, trajectoryFileName(sessionKey)), 'utf8')
    .trim()
    .split('\n')
    .map((line) => trajectoryRecordSchema.parse(JSON.parse(line)));
}

/** A logger that keeps every call. */
export function recordingLogger(): AgentRuntimeLogger & {
  entries: Array<{ level: string; fields: Record<string, unknown>; message?: string }>;
} {
  const entries: Array<{ level: string; fields: Record<string, unknown>; message?: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, message?: string) => {
    entries.push({ level, fields, ...(message !== undefined ? { message } : {}) });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A tool that adds two numbers. */
export const addTool: AgentTool<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers',
  params: z.object({ a: z.number(), b: z.number() }),
  handler: async ({ a, b }) => ({ sum: a + b }),
};

/** Runtime options with {@link addTool} and an agent `calc` allowed only that tool. */
export const calcAgentOptions = {
  tools: [addTool],
  agents: { entries: { calc: { name: 'Calc', tools: ['add'] } } },
} satisfies Partial<AgentRuntimeOptions>;

/** A turn of agent `calc` (see {@link calcAgentOptions}) in which the offline model calls add(2, 3). */
export function runAddTurn(t: TestRuntime, sessionKey: string) {
  return t.runtime.runTurn({ agentId: 'calc', message: '/tool add {"a":2,"b":3}', sessionKey });
}

/** A tool whose handler always throws. */
export const failingTool: AgentTool<{ reason: string }> = {
  name: 'explode',
  description: 'Always fails',
  params: z.object({ reason: z.string() }),
  handler: async ({ reason }) => {
    throw new Error(`exploded: ${reason}`);
  },
};

/**
 * An offline script that keeps every request the model is asked in `seen` and answers each with
 * `answer`: a fixed text, or a script of its own (asked after the request is kept).
 */
export function recordingScript(seen: ModelRequest[], answer: string | OfflineScript = 'ok'): OfflineScript {
  return (request, context) => {
    seen.push(request);
    return typeof answer === 'string' ? { text: answer } : answer(request, context);
  };
}

/**
 * A tool named `name` that keeps what `read` takes from each call's context in `seen`, and the
 * offline script that calls it once per turn and then answers `done`: what a test needs to see
 * the context a turn hands its tools.
 */
export function contextProbe<T>(name: string, description: string, read: (context: ToolContext) => T) {
  const seen: T[] = [];
  const tool: AgentTool<Record<string, never>> = {
    name,
    description,
    params: z.object({}),
    handler: async (_params, context) => {
      seen.push(read(context));
      return 'ok';
    },
  };
  const script: OfflineScript = (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'done' }
      : { toolCalls: [{ toolName: name, input: {} }] };
  return { seen, tool, offline: { script } };
}
