#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ClientError, createHttpClient, RpcCallError } from '@agentd/client';
// Only what every command needs is loaded up front: `agentd call` and `--help` should not pay
// for loading the whole daemon (browser driver, model SDKs, vector index).
import { DEFAULT_HOST, DEFAULT_PORT } from './defaults.js';
import { startIdleHeapShrink } from './idle-heap.js';
import { loadNativeTrim } from './native-trim.js';
import { VERSION } from './version.js';

const HELP = `agentd ${VERSION}: a self-hosted daemon for AI agents

Usage:
  agentd start [--data-dir DIR] [--host HOST] [--port PORT]
      Start the daemon (defaults: ./data, ${DEFAULT_HOST}, ${DEFAULT_PORT}). On the first start
      with no tokens an admin token is printed once (or AGENTD_ADMIN_TOKEN is used).
  agentd token create [--scopes rpc,admin,*] [--client-id ID] [--id ID] [--data-dir DIR]
      Create a token in the data dir's config; prints the secret once. A running
      daemon on that data dir picks it up at once.
  agentd secrets set NAME | list [--filter GLOB] [--limit N] | rotate-key [--data-dir DIR]
      Secrets of the data dir: set reads the value from stdin (never the command line),
      list shows names and metadata, rotate-key re-encrypts every secret under the new
      master key read from stdin (stop the daemon first).
  agentd skills remove NAME | unblock NAME [--data-dir DIR]
      Remove an imported skill: NAME goes into skills.import.blocked in the data dir's config
      (a running daemon is told to reload), which removes it, audited, and refuses its
      re-import until \`skills unblock NAME\`.
  agentd call <method> [json-params] [--url URL] [--token TOKEN]
      Call a method over HTTP and print the result as JSON.
      URL defaults to $AGENTD_URL or http://${DEFAULT_HOST}:${DEFAULT_PORT}; TOKEN to $AGENTD_TOKEN.
  agentd console [--data-dir DIR] [--url URL]
      Print the web console's URL (--url, $AGENTD_URL, or the data dir's gateway host and
      port) and a one-time login link for the local user.
  agentd approvals [--url URL] [--token TOKEN]
      List the tool calls waiting for approval (id, tool, agent, session, age, arguments).
  agentd approve <id> [--reason TEXT] | agentd deny <id> [--reason TEXT]
      Approve or deny one waiting tool call (an admin token is needed).
  agentd mcp [--url URL] [--token TOKEN]
      Serve agentd as an MCP server over stdin/stdout (for MCP clients that spawn their
      servers): a bridge to the daemon's /mcp at URL with TOKEN; a refused token exits 1.
  agentd doctor [--data-dir DIR] [--url URL] [--token TOKEN] [--json]
      Check a data dir and the daemon running on it: config, file modes, master key, each
      provider, chat platform and MCP server, the programs features run, disk space, clock
      skew. Prints a table with a hint per problem (--json for scripts); exit code 1 when a
      check failed.
  agentd --help | --version

Environment: AGENTD_DATA_DIR, AGENTD_ADMIN_TOKEN, AGENTD_URL, AGENTD_TOKEN, AGENTD_MASTER_KEY.
  AGENTD_GRAPH_EXECUTOR=echo runs graph nodes offline with a deterministic executor (each
  node's output is its rendered prompt) after AGENTD_GRAPH_ECHO_DELAY_MS (default 0).
Exit codes: 0 ok, 1 failure, 2 usage error.`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      scopes: { type: 'string' },
      'client-id': { type: 'string' },
      id: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      reason: { type: 'string' },
      filter: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (values.version) {
    console.log(VERSION);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  const dataDir = values['data-dir'] ?? process.env.AGENTD_DATA_DIR ?? './data';

  switch (command) {
    case 'start': {
      const port = values.port === undefined ? undefined : parsePort(values.port);
      ignoreBrokenStdio();
      const [{ startDaemon }, { firstStartBlock }] = await Promise.all([
        import('./daemon.js'),
        import('./first-start.js'),
      ]);
      // The bootstrap's lines are held until the daemon is ready, then shown as one block.
      const bootstrapLines: string[] = [];
      const daemon = await startDaemon({
        dataDir,
        ...(values.host ? { host: values.host } : {}),
        ...(port === undefined ? {} : { port }),
        logToStdout: true,
        print: (line) => bootstrapLines.push(line),
      });
      const trimNative = loadNativeTrim();
      // Start-up's garbage (module sources, schema building) and the young generation it grew are
      // given back by the watcher's first collection once the daemon idles (idle-heap.ts): one
      // made at once would keep the young generation, V8 still seeing start-up's allocation rate.
      startIdleHeapShrink({
        trimNative,
        onCollect: (before, after) =>
          daemon.logger
            .module('daemon')
            .debug(
              { heapBeforeMb: Math.round(before / 2 ** 20), heapAfterMb: Math.round(after / 2 ** 20) },
              'idle heap collected',
            ),
      });
      const shutdown = (signal: string) => {
        daemon.logger.module('daemon').info({ reason: signal }, 'signal received');
        // stop() bounds its last log flush, and exit() then ends the process whatever is
        // still pending (a stdout pipe nobody reads must not keep the daemon alive).
        daemon.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.on('unhandledRejection', (err) => {
        daemon.logger.module('daemon').error(
          {
            err,
            hint: 'a promise failed with nobody waiting for it; the daemon keeps running',
            errorKind: 'internal',
          },
          'unhandled rejection',
        );
      });
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGHUP', () => {
        daemon
          .reload()
          .catch((err: unknown) =>
            daemon.logger
              .module('daemon')
              .error(
                { err, hint: 'fix config.yaml and send SIGHUP again', errorKind: 'config' },
                'reload failed',
              ),
          );
      });
      // Announced only once the signal handlers are in place: a supervisor that sends SIGTERM
      // as soon as it reads this line must get a graceful stop, not the default kill.
      if (bootstrapLines.length > 0) console.log(firstStartBlock(bootstrapLines, daemon.url));
      console.error(
        `agentd listening on ${daemon.url} (WebSocket ${daemon.wsUrl}), data in ${daemon.dataDir}`,
      );
      return -1;
    }
    case 'token': {
      if (rest[0] !== 'create') throw new UsageError('usage: agentd token create [--scopes rpc,admin,*]');
      const scopes = (values.scopes ?? 'rpc').split(',').map((s) => s.trim());
      for (const scope of scopes) {
        if (scope !== 'rpc' && scope !== 'admin' && scope !== '*')
          throw new UsageError(`unknown scope: ${scope}`);
      }
      const { createTokenOffline } = await import('./offline-token.js');
      const created = await createTokenOffline({
        dataDir,
        scopes: scopes as Array<'rpc' | 'admin' | '*'>,
        ...(values['client-id'] ? { clientId: values['client-id'] } : {}),
        ...(values.id ? { id: values.id } : {}),
      });
      console.log(created.token);
      console.error(
        `token ${created.id} (client ${created.clientId}, scopes ${created.scopes.join(',')}) created; ` +
          'it is shown only now. Use it as: Authorization: Bearer <token>' +
          (created.daemonNotified
            ? '; the running daemon was told to reload.'
            : '. A daemon already running on this data dir picks it up on SIGHUP or restart.'),
      );
      return 0;
    }
    case 'secrets': {
      const { runSecretsCli, SecretsUsageError } = await import('./secrets-cli.js');
      return runSecretsCli(rest, {
        dataDir,
        env: process.env,
        filter: values.filter,
        limit: values.limit,
      }).catch((error: unknown) => {
        throw error instanceof SecretsUsageError ? new UsageError(error.message) : error;
      });
    }
    case 'skills': {
      const { runSkillsCli, SkillsUsageError } = await import('./skills-cli.js');
      return runSkillsCli(rest, { dataDir }).catch((error: unknown) => {
        throw error instanceof SkillsUsageError ? new UsageError(error.message) : error;
      });
    }
    case 'call': {
      const [method, json] = rest;
      if (!method) throw new UsageError('usage: agentd call <method> [json-params]');
      let params: unknown;
      if (json !== undefined) {
        try {
          params = JSON.parse(json);
        } catch {
          throw new UsageError('json-params is not valid JSON');
        }
      }
      const url = values.url ?? process.env.AGENTD_URL ?? `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;
      const token = values.token ?? process.env.AGENTD_TOKEN;
      if (!token) throw new UsageError('a token is needed: --token or AGENTD_TOKEN');
      const client = createHttpClient({ url, token });
      try {
        const result = await client.call(method, params as Record<string, unknown> | undefined);
        console.log(JSON.stringify(result, null, 2));
        return 0;
      } catch (error) {
        if (error instanceof RpcCallError) {
          console.error(`error ${error.code}: ${error.message}`);
          if (error.data !== undefined) console.error(JSON.stringify(error.data, null, 2));
          return 1;
        }
        if (error instanceof ClientError) {
          console.error(`${error.code}: ${error.message}`);
          return 1;
        }
        throw error;
      }
    }
    case 'doctor': {
      const { runDoctorCli } = await import('./doctor/doctor.js');
      return runDoctorCli({
        dataDir,
        url: values.url,
        token: values.token,
        json: values.json === true,
        print: (text) => console.log(text),
      });
    }
    case 'console': {
      const { runConsoleCli } = await import('./console-cli.js');
      const url = values.url ?? process.env.AGENTD_URL;
      return runConsoleCli({ dataDir, url, print: (line) => console.log(line) });
    }
    case 'approvals':
    case 'approve':
    case 'deny': {
      const { runApprovalCommand } = await import('./cli-approvals.js');
      const token = values.token ?? process.env.AGENTD_TOKEN;
      if (!token) throw new UsageError('a token is needed: --token or AGENTD_TOKEN');
      return runApprovalCommand(command, rest, {
        url: values.url ?? process.env.AGENTD_URL ?? `http://${DEFAULT_HOST}:${DEFAULT_PORT}`,
        token,
        reason: values.reason,
      });
    }
    case 'mcp': {
      const url = values.url ?? process.env.AGENTD_URL ?? `http://${DEFAULT_HOST}:${DEFAULT_PORT}`;
      const token = values.token ?? process.env.AGENTD_TOKEN;
      if (!token) throw new UsageError('a token is needed: --token or AGENTD_TOKEN');
      const { bridgeMcpStdio } = await import('@agentd/mcp');
      // stdout carries the protocol: nothing else may be printed there. A refused token
      // rejects here, before any message is read, and is printed on stderr.
      await bridgeMcpStdio({ url: `${url.replace(/\/+$/, '')}/mcp`, token });
      return -1;
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/**
 * A parent that started the daemon with piped stdio may exit or close its ends; a write to
 * stdout or stderr then fails (EPIPE, a closed socket). Such a failure is an 'error' event on
 * the stream, and unhandled it would crash the daemon, so it is dropped: the log file keeps
 * every line. Creating the streams here also puts pipes into non-blocking mode early.
 */
function ignoreBrokenStdio(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`invalid port: ${value}`);
  return port;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`agentd: ${(error as Error).message}\n\n${HELP}`);
      process.exitCode = 2;
      return;
    }
    console.error(`agentd: ${(error as Error).message ?? String(error)}`);
    process.exitCode = 1;
  },
);
