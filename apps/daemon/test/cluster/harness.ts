import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpClient } from '@agentd/client';
import type { ClusterStatus } from '@agentd/contracts';
import { type Database, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl } from '@agentd/storage/testing';
import { afterEach } from 'vitest';
import { stringify } from 'yaml';
import { ADMIN_TOKEN, type DaemonProcess, openAiProviders, startDaemonProcess } from '../helpers.js';

/** The master key every instance of a test cluster shares (64 hex digits). */
export const CLUSTER_MASTER_KEY = 'c0ffee'.repeat(10).concat('c0ff');

/**
 * The config.yaml every instance gets unless a test gives another: short leases so takeovers
 * happen within seconds; memory off, which these tests do not use (lighter starts).
 */
export const CLUSTER_CONFIG: Record<string, unknown> = {
  memory: { enabled: false },
  cluster: { leaseMs: 3000 },
};

/**
 * {@link CLUSTER_CONFIG} with agents `entries` on one OpenAI-compatible provider `oai` at
 * `modelUrl` (model `gpt-fake`), its key read from the secret `MODEL_KEY` (give it in `env`).
 */
export function modelClusterConfig(
  modelUrl: string,
  entries: Record<string, Record<string, unknown>>,
): Record<string, unknown> {
  return {
    ...CLUSTER_CONFIG,
    providers: openAiProviders('oai', modelUrl, 'MODEL_KEY', ['gpt-fake']),
    agents: { entries },
  };
}

/** One instance: a real `agentd start` process with its own data dir. */
export interface ClusterNode {
  name: string;
  dataDir: string;
  url: string;
  child: ChildProcess;
  process: DaemonProcess;
}

/** N daemons as child processes on one fresh PostgreSQL database; everything is undone by `cleanup`. */
export interface ClusterHarness {
  /** The database every instance uses (fresh for this harness). */
  readonly databaseUrl: string;
  /**
   * Starts one instance: its own data dir (or `dataDir`), `config` written to config.yaml, the
   * shared database, admin token and master key in its environment.
   */
  start(
    name: string,
    options?: { config?: Record<string, unknown>; dataDir?: string; env?: NodeJS.ProcessEnv },
  ): Promise<ClusterNode>;
  /** Starts `count` instances one after another (`n1`, `n2`, …) with the same config and env. */
  startMany(count: number, config?: Record<string, unknown>, env?: NodeJS.ProcessEnv): Promise<ClusterNode[]>;
  /** One connection to {@link databaseUrl}, opened at the first call and closed by `cleanup`. */
  database(): Promise<Database>;
  /** `gateway.status`'s cluster object, asked of `node`. */
  status(node: ClusterNode): Promise<ClusterStatus>;
  /** kill -9: no shutdown, its rows and leases stay as they were. */
  kill(node: ClusterNode): Promise<void>;
  /** SIGSTOP: the process stays, frozen, missing its heartbeats. */
  pause(node: ClusterNode): void;
  /** SIGCONT. */
  resume(node: ClusterNode): void;
  /** Kills every instance (resuming stopped ones first), closes the database, removes every data dir. */
  cleanup(): Promise<void>;
}

export async function clusterHarness(prefix = 'agentd_cluster'): Promise<ClusterHarness> {
  const databaseUrl = await freshPgDatabaseUrl(prefix);
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  let database: Promise<Database> | undefined;
  const environment = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    AGENTD_STORAGE_URL: databaseUrl,
    AGENTD_ADMIN_TOKEN: ADMIN_TOKEN,
    AGENTD_MASTER_KEY: CLUSTER_MASTER_KEY,
    ...extra,
  });
  const harness: ClusterHarness = {
    databaseUrl,
    async start(name, options = {}) {
      let dataDir = options.dataDir;
      if (dataDir === undefined) {
        dataDir = mkdtempSync(join(tmpdir(), `agentd-cluster-${name}-`));
        dirs.push(dataDir);
        writeFileSync(join(dataDir, 'config.yaml'), stringify(options.config ?? CLUSTER_CONFIG));
      }
      const started = await startDaemonProcess(dataDir, environment(options.env), children);
      return { name, dataDir, url: started.url, child: started.child, process: started };
    },
    async startMany(count, config, env) {
      const nodes: ClusterNode[] = [];
      for (let index = 1; index <= count; index += 1) {
        nodes.push(
          await harness.start(`n${index}`, {
            ...(config === undefined ? {} : { config }),
            ...(env === undefined ? {} : { env }),
          }),
        );
      }
      return nodes;
    },
    database() {
      database ??= openDatabase({ url: databaseUrl, poolMax: 1 });
      return database;
    },
    async status(node) {
      const status = await createHttpClient({ url: node.url, token: ADMIN_TOKEN }).call('gateway.status');
      return status.cluster;
    },
    async kill(node) {
      if (node.child.exitCode !== null || node.child.signalCode !== null) return;
      const exited = new Promise((resolve) => node.child.once('exit', resolve));
      node.child.kill('SIGKILL');
      await exited;
    },
    pause: (node) => void node.child.kill('SIGSTOP'),
    resume: (node) => void node.child.kill('SIGCONT'),
    async cleanup() {
      for (const child of children.splice(0)) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }
      if (database !== undefined) await (await database).close();
      database = undefined;
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** Starts a process expected to refuse; answers everything it wrote to stderr once it exited. */
export async function refusedStart(start: Promise<ClusterNode>): Promise<string> {
  const outcome = await start.then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (outcome === undefined) throw new Error('the instance started, but it should have been refused');
  return outcome;
}

/**
 * A harness per test, for files whose tests each start their own cluster: `open` makes one (its
 * database named after `prefix`), and it is cleaned up after the test, with `alsoClose`.
 */
export function harnessPerTest(alsoClose?: () => Promise<unknown>): {
  open(prefix?: string): Promise<ClusterHarness>;
} {
  let current: ClusterHarness | undefined;
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
    await alsoClose?.();
  });
  return {
    async open(prefix) {
      current = await clusterHarness(prefix);
      return current;
    },
  };
}
