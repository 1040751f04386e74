import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventSink, NodeExecutor } from '@agentd/graph-engine';
import type { MethodDefinition } from '@agentd/rpc-core';
import WebSocket from 'ws';
import { stringify } from 'yaml';
import { createHttpClient, RpcCallError } from '@agentd/client';
import { type RunningDaemon, startDaemon } from '../src/index.js';

/** The admin (`*`) secret every test daemon starts with. */
export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export interface TestDaemon {
  daemon: RunningDaemon;
  dataDir: string;
  stop(): Promise<void>;
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
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'agentd-e2e-'));
  if (options.config) writeFileSync(join(dataDir, 'config.yaml'), stringify(options.config));
  const daemon = await startDaemon({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    env: { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN, ...options.env },
    print: () => undefined,
    ...(options.methods ? { methods: options.methods } : {}),
    ...(options.graphExecutor ? { graphExecutor: options.graphExecutor } : {}),
    ...(options.events ? { events: options.events } : {}),
  });
  return {
    daemon,
    dataDir,
    stop: async () => {
      await daemon.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
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
