import { accessSync, constants, existsSync, lstatSync, readdirSync, readFileSync, statfsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { findBrowserExecutable } from '@agentd/browser';
import { parseConfigText } from '@agentd/config-store';
import { loadMasterKey, openSecretsStore } from '@agentd/secrets';
import { configSections, type DaemonConfig } from '../config-schema.js';
import { type CheckResult, fail, messageOf, ok, skip, warn } from './checks.js';

/** The config file of `dataDir`, validated as the daemon would load it; `undefined` when it is not usable. */
export function checkConfig(dataDir: string): { result: CheckResult; config: DaemonConfig | undefined } {
  const path = join(dataDir, 'config.yaml');
  if (!existsSync(path)) {
    return {
      result: fail(
        'config',
        `no config.yaml in ${dataDir}`,
        'start the daemon once on this data dir (agentd start --data-dir ...) or pass the right --data-dir',
      ),
      config: undefined,
    };
  }
  try {
    const config = parseConfigText(readFileSync(path, 'utf8'), configSections, path);
    return { result: ok('config', `${path} is valid`), config };
  } catch (error) {
    return {
      result: fail(
        'config',
        messageOf(error),
        'fix config.yaml (config.schema shows every field), then start again',
      ),
      config: undefined,
    };
  }
}

/** Most entries looked at under the data dir; a larger tree is reported as partly checked. */
const MODE_WALK_LIMIT = 20_000;

/**
 * The data dir and everything under it readable by its owner alone (directories 0700, files
 * with no group or other bits), as the daemon makes them at start. Symlinks are not followed.
 */
export function checkDataDirModes(dataDir: string): CheckResult {
  const name = 'data dir modes';
  if (!existsSync(dataDir))
    return fail(name, `${dataDir} does not exist`, 'pass the data dir the daemon uses (--data-dir)');
  const loose: string[] = [];
  const foreign: string[] = [];
  const uid = process.getuid?.();
  const pending = [dataDir];
  let seen = 0;
  while (pending.length > 0 && seen < MODE_WALK_LIMIT) {
    const path = pending.pop() as string;
    seen += 1;
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat || stat.isSymbolicLink()) continue;
    if ((stat.mode & 0o077) !== 0) loose.push(path);
    if (uid !== undefined && stat.uid !== uid) foreign.push(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) pending.push(join(path, entry));
  }
  const partly = pending.length > 0 ? ` (first ${MODE_WALK_LIMIT} entries)` : '';
  if (loose.length > 0) {
    return fail(
      name,
      `${loose.length} entries readable or writable by group or others${partly}, e.g. ${loose.slice(0, 3).join(', ')}`,
      `chmod -R go-rwx ${dataDir} (the daemon also repairs the modes at its next start)`,
    );
  }
  if (foreign.length > 0) {
    return warn(
      name,
      `${foreign.length} entries owned by another user${partly}, e.g. ${foreign.slice(0, 3).join(', ')}`,
      `run the daemon and doctor as the data dir's owner, or chown -R that user ${dataDir}`,
    );
  }
  return ok(name, `${seen} entries, owner-only${partly}`);
}

/**
 * The master key: present when `secrets.db` holds secrets, and the one they were sealed with
 * (the store's canary opens). Opens the store only when `secrets.db` exists, so nothing is created.
 */
export async function checkMasterKey(
  dataDir: string,
  config: DaemonConfig | undefined,
  env: NodeJS.ProcessEnv,
): Promise<CheckResult> {
  const name = 'master key';
  let master: ReturnType<typeof loadMasterKey>;
  try {
    master = loadMasterKey({ env, keyFile: config?.secrets.masterKeyFile });
  } catch (error) {
    return fail(
      name,
      messageOf(error),
      'AGENTD_MASTER_KEY (or secrets.masterKeyFile) must be hex or base64 of at least 32 bytes, in a file of mode 0600',
    );
  }
  const hasStore = existsSync(join(dataDir, 'secrets.db'));
  if (!master) {
    return hasStore
      ? fail(
          name,
          'secrets.db exists but no master key is set',
          'set AGENTD_MASTER_KEY (or secrets.masterKeyFile) to the key secrets.db was written under',
        )
      : warn(
          name,
          'no master key: secrets are kept in .env in plain text (mode 0600)',
          'set AGENTD_MASTER_KEY to keep secrets encrypted',
        );
  }
  if (!hasStore) {
    master.key.fill(0);
    return ok(name, `set (${master.source}); no secrets stored yet`);
  }
  try {
    const store = await openSecretsStore({ dataDir, masterKey: master.key });
    await store.close();
    return ok(name, `set (${master.source}) and it opens secrets.db`);
  } catch (error) {
    return fail(
      name,
      messageOf(error),
      'use the master key secrets.db was written under (agentd secrets rotate-key changes it)',
    );
  } finally {
    master.key.fill(0);
  }
}

/** Whether `command` names an executable: a path, or a name found on PATH. */
export function onPath(command: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates =
    isAbsolute(command) || command.includes('/')
      ? [command]
      : (env.PATH ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((dir) => join(dir, command));
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      if (lstatSync(path).isDirectory()) continue;
      return path;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}

/** The programs the features run, each looked up as the daemon would. */
export function checkPrograms(config: DaemonConfig | undefined): CheckResult[] {
  const programs: Array<{ feature: string; command: string; apt: string }> = [
    { feature: 'orchestrate jail', command: config?.orchestrate.bwrapPath ?? 'bwrap', apt: 'bubblewrap' },
    { feature: 'media (audio, video)', command: config?.media.ffmpegCommand ?? 'ffmpeg', apt: 'ffmpeg' },
    { feature: 'text to speech', command: config?.media.tts.espeakCommand ?? 'espeak-ng', apt: 'espeak-ng' },
    {
      feature: 'speech to text',
      command: config?.media.stt.pocketsphinxCommand ?? 'pocketsphinx_continuous',
      apt: 'pocketsphinx pocketsphinx-en-us',
    },
  ];
  const results = programs.map(({ feature, command, apt }) => {
    const found = onPath(command);
    return found
      ? ok(command, `${found} (${feature})`)
      : warn(command, `not found: ${feature} is unavailable`, `apt-get install -y ${apt}`);
  });
  try {
    results.push(ok('chromium', `${findBrowserExecutable(config?.browser.executablePath)} (browser tools)`));
  } catch (error) {
    results.push(
      warn('chromium', messageOf(error), 'apt-get install -y chromium, or set browser.executablePath'),
    );
  }
  return results;
}

/** Free space where the data dir lives. */
export function checkDiskSpace(dataDir: string): CheckResult {
  const name = 'disk space';
  if (!existsSync(dataDir)) return skip(name, `${dataDir} does not exist`);
  const stats = statfsSync(dataDir);
  const freeMb = Math.floor((stats.bavail * stats.bsize) / 2 ** 20);
  const hint =
    "free space on the data dir's file system (old logs under logs/ and obs/ roll by observability.logRotation)";
  if (freeMb < 100) return fail(name, `${freeMb} MB free for ${dataDir}`, hint);
  if (freeMb < 1024) return warn(name, `${freeMb} MB free for ${dataDir}`, hint);
  return ok(name, `${(freeMb / 1024).toFixed(1)} GB free for ${dataDir}`);
}
