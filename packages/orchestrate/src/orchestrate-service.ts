import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AutonomyService } from '@agentd/autonomy';
import type { AgentTool, EventSink, Logger } from '@agentd/contracts';
import { z } from 'zod';
import {
  type CallTally,
  openCapabilitySocket,
  type RoutedCall,
  type RoutedResult,
} from './capability-socket.js';
import { type OrchestrateSection, orchestrateSectionSchema } from './config.js';
import { OrchestrateError } from './errors.js';
import { CLIENT_SOURCE } from './internal/client-source.js';
import { bwrapArgs, JAIL_PATHS, jailEnv, LEASE_ENV, LEASE_ID_ENV, SOCKET_ENV } from './internal/jail.js';
import { type FailureClass, runJailed } from './internal/spawn-jail.js';

export type { FailureClass } from './internal/spawn-jail.js';

/** The autonomy surface a script run needs: its run, a child lease, lease checks, process tracking. */
export type OrchestrateAutonomy = Pick<
  AutonomyService,
  'runOfSession' | 'introspect' | 'mintChildLease' | 'leases' | 'trackProcess'
>;

/** Options of {@link createOrchestrateService}. */
export interface OrchestrateServiceOptions {
  autonomy: OrchestrateAutonomy;
  /** The agent's workspace directory, created when missing (packages/workspace `ensure`). */
  workspaceOf: (agentId: string) => Promise<string>;
  /** Runs a registered tool through the tool runner's gate chain in the run's session. */
  invokeTool: (
    call: RoutedCall & { sessionKey: string; traceId: string | undefined },
  ) => Promise<RoutedResult>;
  /** Whether an agent may call a tool (its allow-list and the denylists): deny-by-origin. */
  mayCall: (agentId: string, tool: string) => boolean;
  /** Whether a tool of that name is registered. */
  hasTool: (tool: string) => boolean;
  /** The guarded fetcher of the `web_fetch` builtin (private-network guard, DNS pinning). @default none: `web_fetch` is unavailable */
  webFetch?: (url: string, signal: AbortSignal) => Promise<unknown>;
  orchestrate?: z.input<typeof orchestrateSectionSchema>;
  events?: EventSink;
  logger?: Logger;
  now?: () => number;
  newId?: () => string;
}

/** One script run request. */
export interface ScriptRequest {
  script: string;
  language: 'js' | 'ts';
  agentId: string;
  sessionKey: string;
  traceId?: string | undefined;
  /** Shorter than `orchestrate.timeoutMs` when given. */
  timeoutMs?: number | undefined;
  signal: AbortSignal;
}

/** What a script run answers (the `orchestrate` tool's result). */
export interface ScriptResult {
  runId: string;
  leaseId?: string | undefined;
  outcome: 'success' | 'failure';
  exitCode: number;
  failureClass?: FailureClass | undefined;
  hint?: string | undefined;
  durationMs: number;
  stdout: string;
  stdoutTruncated: boolean;
  stderr: string;
  toolCalls: CallTally[];
  resultRefs: { count: number; bytes: number };
}

/** The orchestrate service: jailed script runs and the `orchestrate` agent tool. */
export interface OrchestrateService {
  /** Runs one script in the jail; never throws for a script's failure (see `failureClass`). */
  run(request: ScriptRequest): Promise<ScriptResult>;
  /** The `orchestrate` agent tool. */
  tool(): AgentTool;
  /** Applies a changed `orchestrate` section from the next run. */
  applyConfig(section: unknown): void;
  /** The current section. */
  readonly section: OrchestrateSection;
}

function parseSection(value: unknown): OrchestrateSection {
  const checked = orchestrateSectionSchema.safeParse(value ?? {});
  if (checked.success) return checked.data;
  const issues = checked.error.issues.map((issue) => ({
    path: ['orchestrate', ...issue.path.map(String)],
    message: issue.message,
  }));
  throw new OrchestrateError('INVALID_OPTIONS', `${issues[0]?.path.join('.')}: ${issues[0]?.message}`, {
    data: { issues },
  });
}

/** Creates the service. */
export function createOrchestrateService(options: OrchestrateServiceOptions): OrchestrateService {
  let section = parseSection(options.orchestrate);
  const now = options.now ?? Date.now;
  const newId = options.newId ?? (() => randomUUID());

  async function run(request: ScriptRequest): Promise<ScriptResult> {
    const started = now();
    const runId = `orch_${newId()}`;
    const settings = section;
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
      emitSummary(request, result);
      return result;
    };

    // The per-run child lease: without a running autonomy run there is nothing to authenticate.
    const lease = await childLease(request, settings).catch((error: Error) => error);
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
      // Everything the jail binds; a failure here (no workspace, no socket) is a jail not created.
      const setUp = async () => {
        const workspace = await options.workspaceOf(request.agentId);
        const paths = {
          script: join(dir, 'script.mjs'),
          client: join(dir, 'orch.mjs'),
          socket: join(dir, 'orch.sock'),
        };
        await writeFile(paths.script, code, { mode: 0o600 });
        await writeFile(paths.client, CLIENT_SOURCE, { mode: 0o600 });
        const socket = await openCapabilitySocket({
          socketPath: paths.socket,
          leaseId: lease.leaseId,
          validate: (secret) => options.autonomy.leases.validate(secret),
          denylist: settings.toolDenylist,
          mayCall: options.mayCall,
          hasTool: options.hasTool,
          invokeTool: (call) =>
            options.invokeTool({ ...call, sessionKey: request.sessionKey, traceId: request.traceId }),
          workspace,
          bwrapPath: settings.bwrapPath,
          webFetch: options.webFetch,
          signal,
        });
        return { workspace, paths, socket };
      };
      const ready = await setUp().catch((error: Error) => error);
      if (ready instanceof Error) {
        return ended({
          exitCode: -1,
          failureClass: 'spawn_fail',
          leaseId: lease.leaseId,
          hint: `the jail could not be prepared (${ready.message.slice(0, 300)}); scripts never run unjailed`,
        });
      }
      const { workspace, paths, socket } = ready;
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
          signal,
          // The jail leads its own process group: killing the run kills everything in it.
          onStart: (child) => {
            options.autonomy.trackProcess(request.sessionKey, child);
          },
        });
        return ended({
          leaseId: lease.leaseId,
          exitCode: exit.exitCode,
          failureClass: exit.failureClass,
          hint: exit.hint,
          stdout: exit.stdout,
          stdoutTruncated: exit.stdoutBytes > exit.stdout.length,
          stderr: exit.stderr.slice(-4000),
          toolCalls: socket.tallies(),
          resultRefs: socket.resultRefs(),
        });
      } finally {
        controller.abort();
        await socket.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async function childLease(request: ScriptRequest, settings: OrchestrateSection) {
    const own = await options.autonomy.introspect({ sessionKey: request.sessionKey });
    const runView = own.runs[0];
    if (runView?.status !== 'running') throw new Error('the session is not a running sub-agent run');
    const minted = await options.autonomy.mintChildLease(runView.runId, {
      capabilities: runView.capabilities,
      ttlMs: settings.timeoutMs + 60_000,
    });
    return { leaseId: minted.lease.leaseId, secret: minted.secret };
  }

  function emitSummary(request: ScriptRequest, result: ScriptResult): void {
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

  const params = z.strictObject({
    script: z
      .string()
      .min(1)
      .max(1_048_576)
      .describe(
        'The script: ES module JavaScript or TypeScript, run with Node in a jail. Import { invoke } from "/agentd/orch.mjs" to call tools: await invoke("read", { path: "notes.md" }). Its working directory is /workspace (your workspace); print results to stdout.',
      ),
    language: z
      .enum(['js', 'ts'])
      .default('js')
      .describe('js (default) or ts (types are stripped before running)'),
    timeoutMs: z
      .number()
      .int()
      .min(100)
      .max(3_600_000)
      .optional()
      .describe('Shorter limit than the configured one'),
  });

  return {
    run,
    tool() {
      return {
        name: 'orchestrate',
        description:
          'Runs a JavaScript/TypeScript script in a sandbox (no network, only your workspace writable). The script calls tools through `invoke(tool, args)` from "/agentd/orch.mjs": builtins read, grep, find, ls, jq, web_fetch, and your other tools. Answers exit code, stdout and the tool calls made.',
        params,
        handler: async (input: unknown, context) => {
          const args = params.parse(input);
          if (args.script.length > section.maxScriptChars) {
            throw new Error(`script is longer than orchestrate.maxScriptChars (${section.maxScriptChars})`);
          }
          return run({
            script: args.script,
            language: args.language,
            timeoutMs: args.timeoutMs,
            agentId: context.agentId,
            sessionKey: context.sessionKey,
            traceId: context.traceId,
            signal: context.signal,
          });
        },
      } as AgentTool;
    },
    applyConfig(value) {
      section = parseSection(value);
    },
    get section() {
      return section;
    },
  };
}
