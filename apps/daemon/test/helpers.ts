import { type ChildProcess, spawn } from 'node:child_process';
import OpenAI from 'openai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTurnRequest, AgentTurnResult, AgentTurnRunner } from '@agentd/contracts';
import type { EventSink, NodeExecutor } from '@agentd/graph-engine';
import type { MethodDefinition } from '@agentd/rpc-core';
import { expect } from 'vitest';
import WebSocket from 'ws';
import { create as createTar } from 'tar';
import { parse, stringify } from 'yaml';
import { createHttpClient, RpcCallError } from '@agentd/client';
import { type DaemonOptions, type RunningDaemon, startDaemon } from '../src/index.js';

/** The admin (`*`) secret every test daemon starts with. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

/** What a test's turn runner answers for `request`: `response`, at once, two tokens spent. */
export function turnAnswer(request: AgentTurnRequest, response: string): AgentTurnResult {
  return {
    response,
    tokensUsed: { input: 1, output: 1, total: 2 },
    finishReason: 'stop',
    sessionKey: request.sessionKey ?? 'hook:none',
  };
}

/** A turn runner that answers every turn at once, for tests where what runs before the turn is under test. */
export const quietRunner: AgentTurnRunner = { runTurn: async (request) => turnAnswer(request, 'ok') };

export interface TestDaemon {
  daemon: RunningDaemon;
  dataDir: string;
  stop(): Promise<void>;
}

/** Options of {@link startDaemonIn}: the daemon's own, plus an initial config.yaml. */
export type StartOptions = Partial<DaemonOptions> & { config?: Record<string, unknown> };

/**
 * Starts a real daemon on 127.0.0.1:0 in `dataDir` as {@link ADMIN_TOKEN} (`env` adds to it),
 * writing `config` to config.yaml first when given.
 */
export async function startDaemonIn(dataDir: string, options: StartOptions = {}): Promise<RunningDaemon> {
  const { config, env, ...rest } = options;
  if (config) writeFileSync(join(dataDir, 'config.yaml'), stringify(config));
  return startDaemon({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    env: { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
    print: () => undefined,
    ...rest,
  });
}

/**
 * Edits `<dataDir>/config.yaml` by hand, as a user does outside the daemon (which sees it only
 * on reload): `edit` answers the new content from the parsed file.
 */
export function editConfigFile(
  dataDir: string,
  edit: (onDisk: Record<string, unknown>) => Record<string, unknown>,
): void {
  const file = join(dataDir, 'config.yaml');
  const onDisk = (parse(readFileSync(file, 'utf8')) ?? {}) as Record<string, unknown>;
  writeFileSync(file, stringify(edit(onDisk)));
}

/** Starts a real daemon on 127.0.0.1:0 with a temp data dir and an optional initial config. */
export async function startTestDaemon(
  options: {
    config?: Record<string, unknown>;
    methods?: MethodDefinition[];
    graphExecutor?: NodeExecutor;
    events?: EventSink;
    dataDir?: string;
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<TestDaemon> {
  const { dataDir = mkdtempSync(join(tmpdir(), 'agentd-e2e-')), ...rest } = options;
  const daemon = await startDaemonIn(dataDir, rest);
  return {
    daemon,
    dataDir,
    stop: async () => {
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The daemons and temp dirs of one test file; `cleanup` (in `afterEach`) stops and removes them all. */
export interface DaemonPool {
  /** A fresh temp dir, removed by `cleanup`. */
  tempDir(): string;
  /** {@link startDaemonIn}, and the daemon is stopped by `cleanup` (stopping twice is harmless). */
  start(dataDir: string, options?: StartOptions): Promise<RunningDaemon>;
  /** {@link startDaemonProcess}, and the process is killed by `cleanup` (if it still runs). */
  startProcess(dataDir: string, env: NodeJS.ProcessEnv): Promise<DaemonProcess>;
  /** Answers `server` (a fake platform or provider) and has `cleanup` close it once the daemons are stopped. */
  closeAfter<T extends Closable>(server: T): T;
  /** Kills every process and stops every daemon started, closes every server, then removes every temp dir. */
  cleanup(): Promise<void>;
}

/** A server a test started (fake platforms and providers all have this). */
export interface Closable {
  close(): Promise<void> | void;
}

/** A {@link DaemonPool} whose temp dirs are named `<prefix>XXXXXX` under the OS temp dir. */
export function daemonPool(prefix = 'agentd-e2e-'): DaemonPool {
  const dirs: string[] = [];
  const daemons: RunningDaemon[] = [];
  const children: ChildProcess[] = [];
  const servers: Closable[] = [];
  return {
    tempDir: () => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    start: async (dataDir, options) => {
      const daemon = await startDaemonIn(dataDir, options);
      daemons.push(daemon);
      return daemon;
    },
    startProcess: (dataDir, env) => startDaemonProcess(dataDir, env, children),
    closeAfter: (server) => {
      servers.push(server);
      return server;
    },
    cleanup: async () => {
      for (const child of children.splice(0)) child.kill('SIGKILL');
      for (const daemon of daemons.splice(0)) await daemon.stop();
      // After the daemons: a daemon still running would reconnect to a fake that went away.
      for (const server of servers.splice(0)) await server.close();
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Awaits a call that must fail over RPC and answers its RpcCallError. */
export async function rpcFailure(call: Promise<unknown>): Promise<RpcCallError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RpcCallError);
  return error as RpcCallError;
}

export { alive, eventually } from '@agentd/test-support';

/**
 * The arguments that run the CLI as users run it: the bundle `dist/cli.js`, which the daemon
 * project's global setup (test/build-bundle.ts) has rebuilt from the current sources.
 */
export const cliNodeArgs = [join(import.meta.dirname, '..', 'dist', 'cli.js')];

/** A daemon started as a real `agentd start` process. */
export interface DaemonProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process has written to stdout so far. */
  stdout(): string;
}

/**
 * Starts `agentd start --data-dir <dataDir> --port 0` as a real process (env over this
 * process's) and waits for its listening line.
 */
export function startDaemonProcess(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  /** Where the child is recorded as soon as it is spawned (so a start that fails is killed too). */
  spawned: ChildProcess[] = [],
): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [...cliNodeArgs, 'start', '--data-dir', dataDir, '--port', '0'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) => {
    // A hang guard, not a speed check: a real process on a loaded 2-core machine can be slow.
    const timer = setTimeout(() => reject(new Error(`daemon did not start: ${err}`)), 60_000);
    child.stderr?.on('data', (chunk) => {
      err += chunk;
      const match = /agentd listening on (http:\/\/[^\s]+)/.exec(err);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], stdout: () => out });
      }
    });
    child.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${err}`)));
  });
}

/** A raw WebSocket that collects every message and close event, for exact wire assertions. */
export interface RawSocket {
  ws: WebSocket;
  /** Next message parsed as JSON (waits up to timeoutMs). */
  next(timeoutMs?: number): Promise<unknown>;
  /** Resolves with [code, reason] when the socket closes. */
  closed: Promise<[number, string]>;
  send(text: string | Buffer): void;
  close(): void;
}

export async function openRaw(url: string, token: string | null = ADMIN_TOKEN): Promise<RawSocket> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const ws = new WebSocket(url, { headers });
  const queue: unknown[] = [];
  const waiters: Array<(value: unknown) => void> = [];
  ws.on('message', (data, isBinary) => {
    const value = JSON.parse(isBinary ? data.toString() : String(data));
    const waiter = waiters.shift();
    if (waiter) waiter(value);
    else queue.push(value);
  });
  const closed = new Promise<[number, string]>((resolve) => {
    ws.on('close', (code, reason) => resolve([code, reason.toString()]));
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    closed,
    next: (timeoutMs = 5000) =>
      queue.length > 0
        ? Promise.resolve(queue.shift())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no message within timeout')), timeoutMs);
            waiters.push((value) => {
              clearTimeout(timer);
              resolve(value);
            });
          }),
    send: (text) => ws.send(text),
    close: () => ws.close(),
  };
}

/** POST /rpc with a raw body; returns status and parsed body (or null for an empty body). */
export async function postRpc(
  baseUrl: string,
  body: string,
  token: string | null = ADMIN_TOKEN,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

type Json = Record<string, unknown>;

/** HTTP calls to a daemon as `token` (admin by default): `call` answers the result, `fail` the RpcCallError. */
export function rpcClient(url: string, token: string = ADMIN_TOKEN) {
  const client = createHttpClient({ url, token });
  return {
    call: <T = Json>(method: string, params: Json = {}) => client.call(method, params) as Promise<T>,
    fail: async (method: string, params: Json = {}): Promise<RpcCallError> => {
      try {
        await client.call(method, params);
      } catch (error) {
        if (error instanceof RpcCallError) return error;
        throw error;
      }
      throw new Error(`${method} did not fail`);
    },
  };
}

/** What {@link rpcClient} answers. */
export type RpcClient = ReturnType<typeof rpcClient>;

/** The messages of a session's history (`session.history`). */
export async function sessionMessages(
  rpc: RpcClient,
  key: string,
): Promise<Array<{ role: string; content: string }>> {
  return (await rpc.call<{ messages: Array<{ role: string; content: string }> }>('session.history', { key }))
    .messages;
}

/**
 * A `providers` section holding one provider `name`: a fake OpenAI-compatible server at
 * `baseUrl` whose key is the secret reference `${secret:<keyVar>}` (the daemon's env holds the
 * key); `extra` adds to the entry.
 */
export function openAiProviders(
  name: string,
  baseUrl: string,
  keyVar: string,
  models: string[],
  extra: Record<string, unknown> = {},
): { entries: Record<string, Record<string, unknown>> } {
  const entry = { type: 'openai-compatible', baseUrl, apiKey: `\${secret:${keyVar}}`, models, ...extra };
  return { entries: { [name]: entry } };
}

/** A gzip tarball of one skill folder `name` holding `skillMd` as SKILL.md, as a registry ships it (built in `workDir`). */
export async function skillTarball(workDir: string, name: string, skillMd: string): Promise<Buffer> {
  mkdirSync(join(workDir, name));
  writeFileSync(join(workDir, name, 'SKILL.md'), skillMd);
  const chunks: Buffer[] = [];
  for await (const chunk of createTar({ gzip: true, cwd: workDir, portable: true }, [name]))
    chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The `OpenAI.APIError` a call of the official client fails with (the test fails when it does not fail so). */
export async function openAiFailure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}
