/**
 * Daemon instances for the cluster benchmark: real `agentd start` processes, each with its own
 * data dir and config.yaml, on one PostgreSQL database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpClient, type HttpClient } from '@agentd/client';
import { stringify } from 'yaml';

export const BENCH_TOKEN = 'bench-cluster-token-0123456789abcdef0123456789';
const MASTER_KEY = 'beef'.repeat(16);
const here = import.meta.dirname;
const built = join(here, '..', 'dist', 'cli.js');

/** One running instance. */
export interface BenchNode {
  url: string;
  /** A client whose calls may wait two minutes (turns that wait on approvals). */
  client: HttpClient;
  /** The warn and error lines the instance logged lately (the last 20). */
  problems(): string[];
  stop(): Promise<void>;
}

/**
 * Starts one instance on `databaseUrl` with `config`: the built CLI (`pnpm bench` builds first),
 * or the sources through tsx when there is no build.
 */
export async function startNode(
  databaseUrl: string,
  config: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Promise<BenchNode> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentd-bench-cluster-'));
  writeFileSync(join(dataDir, 'config.yaml'), stringify(config));
  const entry = existsSync(built) ? [built] : ['--import', 'tsx', join(here, '..', 'src', 'cli.ts')];
  const child = spawn(process.execPath, [...entry, 'start', '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      AGENTD_STORAGE_URL: databaseUrl,
      AGENTD_ADMIN_TOKEN: BENCH_TOKEN,
      AGENTD_MASTER_KEY: MASTER_KEY,
      ...env,
    },
  });
  const problems: string[] = [];
  let partial = '';
  child.stdout?.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!/"level":\s*(40|50|60)|"level":"(warn|error|fatal)"/.test(line)) continue;
      problems.push(line.slice(0, 600));
      if (problems.length > 20) problems.shift();
    }
  });
  const url = await listening(child);
  return {
    url,
    problems: () => [...problems],
    client: createHttpClient({ url, token: BENCH_TOKEN, requestTimeoutMs: 120_000 }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts `count` instances one after another (joins are serialised by the database anyway). */
export async function startNodes(
  count: number,
  databaseUrl: string,
  config: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Promise<BenchNode[]> {
  const nodes: BenchNode[] = [];
  try {
    for (let index = 0; index < count; index += 1) nodes.push(await startNode(databaseUrl, config, env));
  } catch (error) {
    await stopNodes(nodes);
    throw error;
  }
  return nodes;
}

export async function stopNodes(nodes: BenchNode[]): Promise<void> {
  for (const node of nodes.splice(0)) await node.stop();
}

function listening(child: ChildProcess): Promise<string> {
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentd did not start within 120 s: ${err.slice(-2000)}`));
    }, 120_000);
    child.stderr?.on('data', (chunk) => {
      err += chunk;
      const match = /agentd listening on (http:\/\/\S+)/.exec(err);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stderr?.removeAllListeners('data');
        child.stderr?.resume();
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agentd exited ${code} before listening: ${err.slice(-2000)}`));
    });
  });
}

/** The `q`-quantile (0..1) of `values` (nearest rank); NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** One line: `label  p50 … ms  p99 … ms  (n samples)`. */
export function printLatency(label: string, values: readonly number[]): void {
  console.log(
    `  ${label.padEnd(44)} p50 ${quantile(values, 0.5).toFixed(0).padStart(6)} ms  ` +
      `p99 ${quantile(values, 0.99).toFixed(0).padStart(6)} ms  (${values.length} samples)`,
  );
}
