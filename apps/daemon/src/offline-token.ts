import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createTokenStore, type TokenConfig } from '@agentd/auth-scopes';
import { createConfigStore } from '@agentd/config-store';
import { configSections } from './config-schema.js';

/** Result of {@link createTokenOffline}. */
export interface OfflineToken {
  id: string;
  clientId: string;
  scopes: string[];
  token: string;
  /** True when a running daemon was told (SIGHUP) to reload its tokens. */
  daemonNotified: boolean;
}

/**
 * Creates a token straight in the data dir's config (hash only), for `agentd token create`.
 * A daemon running on that data dir is sent SIGHUP so the token works at once.
 */
export async function createTokenOffline(options: {
  dataDir: string;
  scopes: Array<'rpc' | 'admin' | '*'>;
  clientId?: string;
  id?: string;
}): Promise<OfflineToken> {
  const dataDir = resolve(options.dataDir);
  const store = createConfigStore({ dataDir, sections: configSections });
  await store.load();
  const gateway = store.get('gateway') as { tokens: TokenConfig[] };
  const tokens = createTokenStore({
    tokens: gateway.tokens,
    persist: async (next) => {
      await store.patch({ gateway: { tokens: next } });
    },
  });
  const created = await tokens.create({
    scopes: options.scopes,
    ...(options.clientId ? { clientId: options.clientId } : {}),
    ...(options.id ? { id: options.id } : {}),
  });
  return { ...created, daemonNotified: signalRunningDaemon(dataDir) };
}

/**
 * Sends SIGHUP to the daemon running on `dataDir` (named by its pid file, and only when that
 * process is an `agentd start`) so it reloads its config; true when one was told.
 */
export function signalRunningDaemon(dataDir: string): boolean {
  const pidFile = join(dataDir, 'agentd.pid');
  if (!existsSync(pidFile)) return false;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  // A stale pid file (after a crash) may name an unrelated process, for which SIGHUP's
  // default action is to terminate it: signal only a process that is an agentd start.
  if (!isAgentdStart(pid)) return false;
  try {
    process.kill(pid, 'SIGHUP');
    return true;
  } catch {
    return false;
  }
}

function isAgentdStart(pid: number): boolean {
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // No /proc (not Linux) or no such process: do not guess.
    return false;
  }
  const args = commandLine.split('\0');
  return args.includes('start') && args.some((arg) => /agentd|cli\.(js|ts)$/.test(arg));
}
