import { existsSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { resolveSecretRefs } from '@agentd/config-store';
import { openSecrets } from '@agentd/secrets';
import { DEFAULT_HOST, DEFAULT_PORT } from '../defaults.js';
import { type CheckResult, messageOf, skip } from './checks.js';
import {
  checkConfig,
  checkDataDirModes,
  checkDiskSpace,
  checkMasterKey,
  checkPrograms,
} from './local-checks.js';
import {
  checkChannels,
  checkClockSkew,
  checkDaemon,
  checkMcpServers,
  checkProviders,
  type ResolveSecrets,
} from './remote-checks.js';

/** What `agentd doctor` runs with. */
export interface DoctorOptions {
  dataDir: string;
  /** The running daemon's address. @default the data dir's gateway.host and gateway.port */
  url?: string | undefined;
  /** A token for `system.ping` on the running daemon. */
  token?: string | undefined;
  /** @default process.env */
  env?: NodeJS.ProcessEnv | undefined;
  /** Longest one remote check may take, ms. @default 10000 */
  timeoutMs?: number | undefined;
}

/** Every check's result, in the order of the table. */
export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

/**
 * Checks a data dir and the daemon running on it: the config, file modes, the master key,
 * each configured provider, chat platform and MCP server, the programs the features run, disk
 * space and clock skew. Read-only: it creates nothing in the data dir. `ok` is false when any
 * check failed (a warning alone leaves it true).
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const dataDir = resolvePath(options.dataDir);
  const env = options.env ?? process.env;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const { result: configResult, config } = checkConfig(dataDir);
  const checks: CheckResult[] = [configResult, checkDataDirModes(dataDir)];
  const masterKey = await checkMasterKey(dataDir, config, env);
  checks.push(masterKey, ...checkPrograms(config), checkDiskSpace(dataDir));
  const url = options.url ?? env.AGENTD_URL ?? daemonUrl(config);
  checks.push(await checkDaemon(url, options.token ?? env.AGENTD_TOKEN, timeoutMs));
  if (!config) {
    checks.push(skip('providers, channels, mcp', 'the config did not load'));
    return report(checks);
  }
  let resolve: ResolveSecrets;
  let close = async () => {};
  if (masterKey.status === 'fail') {
    resolve = async (value) => resolveSecretRefs(value, async () => undefined);
  } else {
    // Without secrets.db the store is not opened (opening would create it): .env and the
    // environment are where references resolve then.
    const sealed = existsSync(join(dataDir, 'secrets.db'));
    const { AGENTD_MASTER_KEY: _key, ...plainEnv } = env;
    const secrets = await openSecrets(
      sealed ? { dataDir, env, masterKeyFile: config.secrets.masterKeyFile } : { dataDir, env: plainEnv },
    );
    resolve = async (value) => resolveSecretRefs(value, (name) => secrets.lookup(name));
    close = () => secrets.close();
  }
  try {
    const remote = await Promise.all([
      checkProviders(config, resolve, timeoutMs),
      checkChannels(config, resolve, timeoutMs),
      checkMcpServers(config, resolve, timeoutMs),
    ]);
    checks.push(...remote.flat(), await checkClockSkew(config, timeoutMs));
  } finally {
    await close();
  }
  return report(checks);
}

function report(checks: CheckResult[]): DoctorReport {
  return { ok: checks.every((check) => check.status !== 'fail'), checks };
}

function daemonUrl(config: { gateway: { host: string; port: number } } | undefined): string {
  const host = config?.gateway.host ?? DEFAULT_HOST;
  // A daemon listening on every interface is still reached on the loopback address.
  const reach = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reach.includes(':') ? `[${reach}]` : reach}:${config?.gateway.port ?? DEFAULT_PORT}`;
}

const MARK: Record<CheckResult['status'], string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', skip: '-' };

/** The report as a table for a terminal, each problem followed by its hint. */
export function formatReport(report: DoctorReport): string {
  const nameWidth = Math.max(5, ...report.checks.map((check) => check.name.length));
  const lines = [`${'CHECK'.padEnd(nameWidth)}  STATUS  DETAIL`];
  for (const check of report.checks) {
    lines.push(`${check.name.padEnd(nameWidth)}  ${MARK[check.status].padEnd(6)}  ${check.detail}`);
    if (check.hint) lines.push(`${''.padEnd(nameWidth)}          hint: ${check.hint}`);
  }
  const failed = report.checks.filter((check) => check.status === 'fail').length;
  const warned = report.checks.filter((check) => check.status === 'warn').length;
  lines.push('', failed === 0 ? `no failures (${warned} warnings)` : `${failed} failed, ${warned} warnings`);
  return lines.join('\n');
}

/** `agentd doctor`: prints the table (or the report as JSON); exit code 1 when a check failed. */
export async function runDoctorCli(
  options: DoctorOptions & { json: boolean; print: (text: string) => void },
) {
  let result: DoctorReport;
  try {
    result = await runDoctor(options);
  } catch (error) {
    // A doctor that cannot finish still says why, in the requested form.
    result = report([
      { name: 'doctor', status: 'fail', detail: messageOf(error), hint: 'report this as a bug' },
    ]);
  }
  options.print(options.json ? JSON.stringify(result, null, 2) : formatReport(result));
  return result.ok ? 0 : 1;
}
