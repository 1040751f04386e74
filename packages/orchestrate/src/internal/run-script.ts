import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCapabilitySocket } from '../capability-socket.js';
import type { OrchestrateSection } from '../config.js';
import type {
  OrchestrateAutonomy,
  OrchestrateServiceOptions,
  ScriptRequest,
  ScriptResult,
} from '../orchestrate-service.js';
import { CLIENT_SOURCE } from './client-source.js';
import { bwrapArgs, JAIL_PATHS, jailEnv, LEASE_ENV, LEASE_ID_ENV, SOCKET_ENV } from './jail.js';
import { keepLeaseAlive } from './lease-renewal.js';
import { runJailed } from './spawn-jail.js';

/** What a script run needs from its service: the options, a clock and ids. */
export interface RunContext {
  options: OrchestrateServiceOptions;
  now: () => number;
  newId: () => string;
}

/**
 * One script run: the child lease, TypeScript stripped, the private directory with the script,
 * the client and the capability socket, the jail, and the run summary (emitted however it
 * ends). Never throws for the script's failure: see `failureClass`.
 */
export async function runScript(
  ctx: RunContext,
  settings: OrchestrateSection,
  request: ScriptRequest,
): Promise<ScriptResult> {
  const { options, now } = ctx;
  const started = now();
  const runId = `orch_${ctx.newId()}`;
  const ended = (fields: Partial<ScriptResult> & Pick<ScriptResult, 'exitCode'>): ScriptResult => {
    const result: ScriptResult = {
      runId,
      outcome: fields.exitCode === 0 ? 'success' : 'failure',
      durationMs: Math.max(0, now() - started),
      stdout: '',
      stdoutTruncated: false,
      stderr: '',
      toolCalls: [],
      resultRefs: { count: 0, bytes: 0 },
      ...fields,
    };
    emitSummary(options, request, result);
    return result;
  };

  // The per-run child lease: without a running autonomy run there is nothing to authenticate.
  const lease = await childLease(options.autonomy, request, settings).catch((error: Error) => error);
  if (lease instanceof Error) {
    return ended({
      exitCode: -1,
      failureClass: 'lease_absent',
      hint: `no capability lease for this session (${lease.message.slice(0, 200)}); orchestrate runs inside a sub-agent run (session.spawn or subagent_spawn)`,
    });
  }
  let code: string;
  try {
    code =
      request.language === 'ts'
        ? // Loaded on the first TypeScript script: a daemon that never runs one never loads esbuild.
          (await (await import('esbuild')).transform(request.script, { loader: 'ts', format: 'esm' })).code
        : request.script;
  } catch (error) {
    return ended({
      exitCode: 1,
      failureClass: 'nonzero_exit',
      leaseId: lease.leaseId,
      stderr: (error as Error).message.slice(0, 4000),
    });
  }

  const dir = await mkdtemp(join(tmpdir(), 'agentd-orch-'));
  const controller = new AbortController();
  const signal = AbortSignal.any([request.signal, controller.signal]);
  try {
    const ready = await prepareJail(ctx.options, settings, request, { dir, code, lease, signal }).catch(
      (error: Error) => error,
    );
    if (ready instanceof Error) {
      return ended({
        exitCode: -1,
        failureClass: 'spawn_fail',
        leaseId: lease.leaseId,
        hint: `the jail could not be prepared (${ready.message.slice(0, 300)}); scripts never run unjailed`,
      });
    }
    const { workspace, paths, socket } = ready;
    const stopRenewal = keepLeaseAlive({
      renew: (secret, ttlMs) => options.autonomy.leases.renew(secret, ttlMs),
      secret: lease.secret,
      leaseId: lease.leaseId,
      ttlMs: settings.leaseTtlMs,
      logger: options.logger,
    });
    try {
      const exit = await runJailed({
        bwrapPath: settings.bwrapPath,
        args: bwrapArgs({ workspace, ...paths, node: settings.nodePath ?? process.execPath }),
        env: jailEnv(process.env, {
          [SOCKET_ENV]: JAIL_PATHS.socket,
          [LEASE_ENV]: lease.secret,
          [LEASE_ID_ENV]: lease.leaseId,
        }),
        timeoutMs: Math.min(settings.timeoutMs, request.timeoutMs ?? settings.timeoutMs),
        stdoutCapBytes: settings.stdoutCapBytes,
        limits: {
          runId,
          limits: { maxProcesses: settings.maxProcesses, maxMemoryBytes: settings.maxMemoryMb * 1024 * 1024 },
        },
        signal,
        // The jail leads its own process group: killing the run kills everything in it.
        onStart: (child) => {
          // Once the jail has exited its pid may be reused: a later kill of the run must not
          // signal whatever process group holds that number then.
          let exited = false;
          child.once('exit', () => {
            exited = true;
          });
          options.autonomy.trackProcess(request.sessionKey, {
            get pid() {
              return exited ? undefined : child.pid;
            },
            kill: (signal) => !exited && child.kill(signal),
          });
        },
      });
      return ended({
        leaseId: lease.leaseId,
        exitCode: exit.exitCode,
        failureClass: exit.failureClass,
        hint: exit.hint,
        stdout: exit.stdout,
        stdoutTruncated: exit.stdoutBytes > settings.stdoutCapBytes,
        stderr: exit.stderr.slice(-4000),
        toolCalls: socket.tallies(),
        resultRefs: socket.resultRefs(),
      });
    } finally {
      stopRenewal();
      controller.abort();
      await socket.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Everything the jail binds: the workspace, the script and the client in the private
 * directory, and the capability socket there. A failure here is a jail not created.
 */
async function prepareJail(
  options: OrchestrateServiceOptions,
  settings: OrchestrateSection,
  request: ScriptRequest,
  run: { dir: string; code: string; lease: { leaseId: string }; signal: AbortSignal },
) {
  const workspace = await options.workspaceOf(request.agentId);
  const paths = {
    script: join(run.dir, 'script.mjs'),
    client: join(run.dir, 'orch.mjs'),
    socket: join(run.dir, 'orch.sock'),
  };
  await writeFile(paths.script, run.code, { mode: 0o600 });
  await writeFile(paths.client, CLIENT_SOURCE, { mode: 0o600 });
  const socket = await openCapabilitySocket({
    socketPath: paths.socket,
    leaseId: run.lease.leaseId,
    validate: (secret) => options.autonomy.leases.validate(secret),
    denylist: settings.toolDenylist,
    mayCall: options.mayCall,
    hasTool: options.hasTool,
    invokeTool: (call) =>
      options.invokeTool({
        ...call,
        sessionKey: request.sessionKey,
        traceId: request.traceId,
        memoryTenant: request.memoryTenant,
      }),
    workspace,
    bwrapPath: settings.bwrapPath,
    webFetch: options.webFetch,
    webSearch: settings.webSearch,
    signal: run.signal,
  });
  return { workspace, paths, socket };
}

async function childLease(
  autonomy: OrchestrateAutonomy,
  request: ScriptRequest,
  settings: OrchestrateSection,
) {
  const own = await autonomy.introspect({ sessionKey: request.sessionKey });
  const runView = own.runs[0];
  if (runView?.status !== 'running') throw new Error('the session is not a running sub-agent run');
  const minted = await autonomy.mintChildLease(runView.runId, {
    capabilities: runView.capabilities,
    ttlMs: settings.leaseTtlMs,
  });
  return { leaseId: minted.lease.leaseId, secret: minted.secret };
}

function emitSummary(options: OrchestrateServiceOptions, request: ScriptRequest, result: ScriptResult): void {
  // Results the script consumed but the model never saw, less what it printed: ~4 bytes a token.
  const consumed = Math.round(result.resultRefs.bytes / 4);
  const saved = Math.max(0, consumed - Math.round(Buffer.byteLength(result.stdout) / 4));
  options.events?.emit('orchestrate:run_summary', {
    sessionKey: request.sessionKey,
    ...(request.traceId ? { traceId: request.traceId } : {}),
    agentId: request.agentId,
    runId: result.runId,
    ...(result.leaseId ? { leaseId: result.leaseId } : {}),
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    ...(result.failureClass && result.exitCode !== 0 ? { failureClass: result.failureClass } : {}),
    toolCalls: result.toolCalls,
    resultRefs: result.resultRefs,
    ...(consumed > 0
      ? { savings: { estSavedTokens: saved, savedRatio: Math.round((saved / consumed) * 1000) / 1000 } }
      : {}),
  });
  if (result.failureClass === 'spawn_fail') {
    options.logger?.warn(
      {
        step: 'orchestrate',
        runId: result.runId,
        hint: result.hint ?? 'install bubblewrap',
        errorKind: 'dependency',
      },
      'orchestrate: the jail could not be created',
    );
  }
}
