import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createConfigStore } from '@agentd/config-store';
import {
  loadMasterKey,
  openSecrets,
  openSecretsStore,
  parseMasterKey,
  SecretsError,
  secretFilterSchema,
  secretNameSchema,
} from '@agentd/secrets';
import { acquireDataDirLock } from '@agentd/storage';
import { configSections } from './config-schema.js';

/** What `agentd secrets …` runs with; streams are injectable for tests and embedders. */
export interface SecretsCliOptions {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  /** `--filter` of `list`. */
  filter?: string | undefined;
  /** `--limit` of `list`. */
  limit?: string | undefined;
  /** Where `set` reads the value and `rotate-key` the new key. @default process.stdin */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Lines for the operator. @default console.error */
  say?: (line: string) => void;
  /** Machine-readable output (the listing). @default console.log */
  print?: (line: string) => void;
}

/** A command line the CLI refuses (exit code 2). */
export class SecretsUsageError extends Error {}

/** The usage lines of `agentd secrets`. */
export const SECRETS_USAGE = `usage:
  agentd secrets set NAME          (the value is read from stdin, never from the command line)
  agentd secrets list [--filter GLOB] [--limit N]
  agentd secrets rotate-key        (the new master key, hex or base64, is read from stdin)`;

/**
 * `agentd secrets set|list|rotate-key` on the data directory, without a running daemon's
 * help. A value set here reaches a running daemon when it next resolves the reference (its
 * next start, or a change of the referencing section); `env.set` applies it at once.
 * @returns the exit code.
 */
export async function runSecretsCli(args: string[], options: SecretsCliOptions): Promise<number> {
  const [command, name, ...extra] = args;
  const say = options.say ?? ((line: string) => console.error(line));
  const print = options.print ?? ((line: string) => console.log(line));
  const stdin = options.stdin ?? process.stdin;
  const dataDir = resolve(options.dataDir);
  const context = { dataDir, env: options.env, masterKeyFile: await masterKeyFile(dataDir) };
  if (command === 'set' && name !== undefined && extra.length === 0) {
    const checked = secretNameSchema.safeParse(name);
    if (!checked.success) throw new SecretsUsageError(`invalid NAME: ${checked.error.issues[0]?.message}`);
    if (stdin.isTTY) say('Type the value, then press Ctrl-D (it is not taken from the command line).');
    const value = withoutFinalNewline(await readAll(stdin));
    const secrets = await openSecrets(context);
    try {
      const { created, storage } = await secrets.set(checked.data, value);
      say(
        `${checked.data} ${created ? 'stored' : 'replaced'} (${storage === 'encrypted' ? 'encrypted in secrets.db' : 'in plain text in .env: no master key is configured'}).`,
      );
    } finally {
      await secrets.close();
    }
    return 0;
  }
  if (command === 'list' && name === undefined) {
    const filter = options.filter === undefined ? undefined : secretFilterSchema.safeParse(options.filter);
    if (filter && !filter.success)
      throw new SecretsUsageError(`invalid --filter: ${filter.error.issues[0]?.message}`);
    const limit = options.limit === undefined ? undefined : Number(options.limit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 500)) {
      throw new SecretsUsageError('invalid --limit: an integer from 1 to 500');
    }
    const secrets = await openSecrets(context);
    try {
      print(
        JSON.stringify(
          { secrets: await secrets.list({ filter: filter?.data, limit }), storage: secrets.storage },
          null,
          2,
        ),
      );
    } finally {
      await secrets.close();
    }
    return 0;
  }
  if (command === 'rotate-key' && name === undefined) {
    return rotateKey(context, stdin, say);
  }
  throw new SecretsUsageError(SECRETS_USAGE);
}

/**
 * Re-encrypts every secret under the key read from stdin, in one transaction, with the data
 * directory locked: a running daemon would keep using the old key.
 */
async function rotateKey(
  context: { dataDir: string; env: NodeJS.ProcessEnv; masterKeyFile: string | undefined },
  stdin: NodeJS.ReadableStream & { isTTY?: boolean },
  say: (line: string) => void,
): Promise<number> {
  const current = loadMasterKey({ env: context.env, keyFile: context.masterKeyFile });
  if (!current) {
    throw new SecretsError(
      'NO_MASTER_KEY',
      'rotate-key needs the current master key: set AGENTD_MASTER_KEY or secrets.masterKeyFile',
    );
  }
  if (stdin.isTTY) say('Type the new master key (hex or base64, at least 32 bytes), then press Ctrl-D.');
  const next = parseMasterKey(await readAll(stdin), 'The new master key');
  if (next.equals(current.key)) throw new SecretsUsageError('the new master key is the current one');
  const lock = acquireDataDirLock({ dataDir: context.dataDir });
  try {
    const store = await openSecretsStore({ dataDir: context.dataDir, masterKey: current.key });
    try {
      say('rotating the master key of secrets.db');
      const { rotated } = await store.rotateKey(next);
      say(
        `${rotated} secrets re-encrypted under the new key. Put it in ${current.source === 'env' ? 'AGENTD_MASTER_KEY' : context.masterKeyFile} before the next start: the old key no longer opens secrets.db.`,
      );
    } finally {
      await store.close();
    }
  } finally {
    lock.release();
    current.key.fill(0);
    next.fill(0);
  }
  return 0;
}

/** `secrets.masterKeyFile` of the data dir's config, when it has a config. */
async function masterKeyFile(dataDir: string): Promise<string | undefined> {
  if (!existsSync(join(dataDir, 'config.yaml'))) return undefined;
  const store = createConfigStore({ dataDir, sections: configSections });
  await store.load();
  return store.current().secrets.masterKeyFile;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** `echo value |` and a typed line end in one line break that is not part of the value. */
function withoutFinalNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}
