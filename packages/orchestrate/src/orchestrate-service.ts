import { toFieldIssues } from '@agentd/errors';
import { randomUUID } from 'node:crypto';
import type { AutonomyService } from '@agentd/autonomy';
import type { AgentTool, EventSink, Logger } from '@agentd/contracts';
import { z } from 'zod';
import type { CallTally, RoutedCall, RoutedResult } from './capability-socket.js';
import { type OrchestrateSection, orchestrateSectionSchema } from './config.js';
import { OrchestrateError } from './errors.js';
import { type RunContext, runScript } from './internal/run-script.js';
import type { FailureClass } from './internal/spawn-jail.js';

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
    call: RoutedCall & {
      sessionKey: string;
      traceId: string | undefined;
      /** The memory tenant of the turn that ran the script, when it has one. */
      memoryTenant: string | undefined;
    },
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
  /** The memory tenant of the calling turn: the script's tool calls are made in it. */
  memoryTenant?: string | undefined;
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
  const issues = toFieldIssues(checked.error.issues, ['orchestrate']);
  throw new OrchestrateError('INVALID_OPTIONS', `${issues[0]?.path.join('.')}: ${issues[0]?.message}`, {
    data: { issues },
  });
}

/** Creates the service. */
export function createOrchestrateService(options: OrchestrateServiceOptions): OrchestrateService {
  let section = parseSection(options.orchestrate);
  const ctx: RunContext = {
    options,
    now: options.now ?? Date.now,
    newId: options.newId ?? (() => randomUUID()),
  };
  const run = (request: ScriptRequest) => runScript(ctx, section, request);

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
          'Runs a JavaScript/TypeScript script in a sandbox (no network, only your workspace writable). The script calls tools through `invoke(tool, args)` from "/agentd/orch.mjs": builtins read, grep, find, ls, jq, web_fetch, web_search, and your other tools. Answers exit code, stdout and the tool calls made.',
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
            memoryTenant: context.memoryTenant,
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
