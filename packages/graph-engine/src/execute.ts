import type { CompiledGraph } from './definition.js';
import { GraphError } from './errors.js';
import { renderSegments } from './internal/template.js';

/** Status of a graph run: `pending`, `running`, then `completed`, `failed` or `cancelled`. */
export type RunStatus = 'pending' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Status of one node: `pending`, `running`, then `completed`, `failed`, `skipped` or `cancelled`. */
export type NodeStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped' | 'cancelled';

/** What an executor is asked to do for one attempt of one node. */
export interface NodeRequest {
  runId: string;
  graphId: string;
  nodeId: string;
  /** The node's `agentId`, or the run's default agent when the node names none. */
  agentId: string | undefined;
  /** The tenant the run belongs to, if any: its turns run in that tenant's sessions. */
  tenant?: string | undefined;
  /** The node's prompt with `{{inputs.x}}` and `{{nodes.<id>.output}}` filled in. */
  prompt: string;
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
  /** Time limit of this attempt; the engine enforces it even if the executor ignores it. */
  timeoutMs: number;
  /** Aborted at the time limit or when the run is interrupted (shutdown). */
  signal: AbortSignal;
}

/**
 * Runs one node attempt and resolves with its output text. Rejecting (or timing out) fails
 * the attempt. In agentd the executor runs one agent turn; any function of a prompt works.
 */
export interface NodeExecutor {
  run(request: NodeRequest): Promise<string>;
}

/** The state of one node as the engine sees it. */
export interface NodeState {
  status: NodeStatus;
  /** Full output text, present once the node completed. */
  output?: string | undefined;
  /** Why the node failed, was skipped or cancelled. */
  error?: string | undefined;
  /** Attempts started so far. */
  attempts: number;
  startedAt?: number | undefined;
  finishedAt?: number | undefined;
}

/** How an execution ended; `interrupted` means {@link GraphExecution.interrupt} stopped it. */
export type ExecutionOutcome = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** Callbacks a durable layer uses to record progress. A returned promise is awaited. */
export interface ExecutionListener {
  /** A node attempt was dispatched. Listeners log their own failures; a rejection is ignored. */
  nodeStarted?(nodeId: string, state: NodeState): void | Promise<void>;
  /**
   * A node reached a final status. For a completed node its dependants start only after a
   * returned promise settles, so an output can be made durable before anything reads it.
   */
  nodeSettled?(nodeId: string, state: NodeState): void | Promise<void>;
}

/** Options of {@link executeGraph}. */
export interface ExecuteGraphOptions {
  /** The compiled graph. */
  graph: CompiledGraph;
  /** Runs each node attempt. */
  executor: NodeExecutor;
  /** Values for `{{inputs.x}}`. @default {} */
  inputs?: Record<string, unknown> | undefined;
  /** Most node attempts in flight at once. @default 4 */
  concurrency?: number | undefined;
  /** Time limit of an attempt when the node sets none, in ms. @default 300000 */
  defaultTimeoutMs?: number | undefined;
  /** Wait before each retry, in ms. @default 0 */
  retryDelayMs?: number | undefined;
  /** Run id handed to the executor. @default 'run' */
  runId?: string | undefined;
  /** Graph id handed to the executor. @default 'graph' */
  graphId?: string | undefined;
  /** Agent for nodes that name none. */
  defaultAgentId?: string | undefined;
  /** The tenant the run belongs to, passed on in each {@link NodeRequest}. */
  tenant?: string | undefined;
  /**
   * Final states carried over from an interrupted run: completed nodes keep their outputs
   * (which later prompts read), failed or skipped ones stay so. Every other node runs.
   */
  resumeFrom?: ReadonlyMap<string, NodeState> | undefined;
  /** Start as if `cancel()` had been called (a cancel recorded before a restart). */
  cancelled?: boolean | undefined;
  /** Progress callbacks. */
  listener?: ExecutionListener | undefined;
  /** Clock. @default Date.now */
  now?: (() => number) | undefined;
}

/** A running graph. */
export interface GraphExecution {
  /** Resolves once no node is in flight and nothing more will be dispatched. */
  readonly done: Promise<ExecutionOutcome>;
  /** `running` until done, then the outcome. */
  readonly status: 'running' | ExecutionOutcome;
  /**
   * Stops dispatching: in-flight nodes finish (without further retries), pending nodes end
   * `cancelled`, the run ends `cancelled`. False when the run had already finished.
   */
  cancel(): boolean;
  /**
   * Stops at once for a shutdown: in-flight attempts are aborted and their results ignored,
   * nothing is reported for them, and `done` resolves `interrupted`. A durable layer resumes
   * the run later.
   */
  interrupt(): void;
  /** The current state of one node (a live object; do not mutate). */
  node(nodeId: string): NodeState | undefined;
  /** Current states of all nodes, in definition order. */
  nodes(): Array<{ id: string } & NodeState>;
  /** Output of a completed node. */
  output(nodeId: string): string | undefined;
}

const interruptedReason = new GraphError('CLOSED', 'graph execution interrupted');

/**
 * Executes a compiled graph: nodes whose dependencies completed are dispatched in definition
 * order up to `concurrency`; each attempt has a time limit and failed attempts are retried
 * up to the node's `retries`; a node that finally fails marks its transitive dependants
 * `skipped` while independent branches go on.
 */
export function executeGraph(options: ExecuteGraphOptions): GraphExecution {
  const { graph, executor, listener } = options;
  const nodes = graph.nodes;
  const count = nodes.length;
  const inputs = options.inputs ?? {};
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? 4));
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 300_000;
  const retryDelayMs = options.retryDelayMs ?? 0;
  const runId = options.runId ?? 'run';
  const graphId = options.graphId ?? 'graph';
  const now = options.now ?? Date.now;

  const states: NodeState[] = new Array(count);
  const waiting = new Int32Array(count);
  const ready: number[] = [];
  let readyHead = 0;
  let inFlight = 0;
  let open = 0; // nodes not yet in a final status
  let anyFailed = false;
  let cancelRequested = options.cancelled ?? false;
  let interrupted = false;
  let status: 'running' | ExecutionOutcome = 'running';
  const controllers = new Set<AbortController>();
  const interruptWaiters = new Set<() => void>();
  let resolveDone!: (outcome: ExecutionOutcome) => void;
  const done = new Promise<ExecutionOutcome>((resolve) => {
    resolveDone = resolve;
  });

  const outputOf = (id: string): string | undefined => {
    const index = graph.indexOf.get(id);
    return index === undefined ? undefined : states[index]!.output;
  };

  // Initial states: carried-over final states stay; the rest wait for their dependencies.
  for (let index = 0; index < count; index++) {
    const previous = options.resumeFrom?.get(nodes[index]!.id);
    if (
      previous &&
      (previous.status === 'completed' || previous.status === 'failed' || previous.status === 'skipped')
    ) {
      states[index] = { ...previous };
      if (previous.status !== 'completed') anyFailed = anyFailed || previous.status === 'failed';
    } else {
      states[index] = { status: 'pending', attempts: previous?.attempts ?? 0 };
      open++;
    }
  }
  const pendingSettles: Promise<void>[] = [];
  for (let index = 0; index < count; index++) {
    if (states[index]!.status !== 'pending') continue;
    let unmet = 0;
    let blockedBy: string | undefined;
    for (const dependency of nodes[index]!.dependencies) {
      const dependencyStatus = states[dependency]!.status;
      if (dependencyStatus === 'failed' || dependencyStatus === 'skipped')
        blockedBy ??= nodes[dependency]!.id;
      if (dependencyStatus !== 'completed') unmet++;
    }
    waiting[index] = unmet;
    if (blockedBy !== undefined) skipFrom(index, blockedBy, pendingSettles);
    else if (unmet === 0) ready.push(index);
  }

  function report(index: number, kind: 'started' | 'settled'): Promise<void> | undefined {
    if (!listener) return undefined;
    const state = states[index]!;
    const result =
      kind === 'started'
        ? listener.nodeStarted?.(nodes[index]!.id, state)
        : listener.nodeSettled?.(nodes[index]!.id, state);
    // Listeners log their own failures; a rejection must not stall the run.
    return result instanceof Promise ? result.then(ignore, ignore) : undefined;
  }

  function skipFrom(index: number, because: string, settles: Promise<void>[]): void {
    // Depth-first over dependants; a node already final (or running) is left alone.
    const stack = [index];
    while (stack.length > 0) {
      const next = stack.pop()!;
      const state = states[next]!;
      if (state.status !== 'pending') continue;
      state.status = 'skipped';
      state.error = `dependency '${because}' did not complete`;
      state.finishedAt = now();
      open--;
      const settled = report(next, 'settled');
      if (settled) settles.push(settled);
      for (const dependant of nodes[next]!.dependants) stack.push(dependant);
    }
  }

  function finishIfIdle(): void {
    if (status !== 'running' || inFlight > 0) return;
    if (!interrupted && !cancelRequested && readyHead < ready.length) return;
    if (!interrupted && !cancelRequested && open > 0) return;
    if (interrupted) {
      status = 'interrupted';
      resolveDone(status);
      return;
    }
    const settles: Promise<void>[] = [];
    if (cancelRequested) {
      for (let index = 0; index < count; index++) {
        const state = states[index]!;
        if (state.status !== 'pending') continue;
        state.status = 'cancelled';
        state.error = 'run cancelled before the node started';
        state.finishedAt = now();
        open--;
        const settled = report(index, 'settled');
        if (settled) settles.push(settled);
      }
    }
    const outcome: ExecutionOutcome = cancelRequested ? 'cancelled' : anyFailed ? 'failed' : 'completed';
    const finish = () => {
      status = outcome;
      resolveDone(outcome);
    };
    if (settles.length > 0 || pendingSettles.length > 0) {
      void Promise.all([...pendingSettles, ...settles]).then(finish, finish);
    } else {
      finish();
    }
  }

  function pump(): void {
    while (!cancelRequested && !interrupted && inFlight < concurrency && readyHead < ready.length) {
      const index = ready[readyHead++]!;
      inFlight++;
      void runNode(index);
    }
    if (readyHead > 1024 && readyHead * 2 > ready.length) {
      ready.splice(0, readyHead);
      readyHead = 0;
    }
    finishIfIdle();
  }

  async function runNode(index: number): Promise<void> {
    const node = nodes[index]!;
    const state = states[index]!;
    const timeoutMs = node.timeoutMs ?? defaultTimeoutMs;
    let lastError = '';
    let succeeded = false;
    state.status = 'running';
    state.startedAt = now();
    const maxAttempts = node.retries + 1;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) {
        if (cancelRequested || interrupted) break;
        if (retryDelayMs > 0) await pause(retryDelayMs, interruptWaiters);
        if (cancelRequested || interrupted) break;
      }
      state.attempts++;
      const started = report(index, 'started');
      if (started) await started;
      try {
        const output = await attemptNode(index, attempt, timeoutMs);
        if (interrupted) break;
        state.output = output;
        succeeded = true;
        break;
      } catch (error) {
        if (interrupted) break;
        lastError = describeError(error);
      }
    }
    if (interrupted) {
      // Left for the durable layer to resume; nothing is reported for this attempt.
      inFlight--;
      finishIfIdle();
      return;
    }
    state.finishedAt = now();
    open--;
    if (succeeded) {
      state.status = 'completed';
      const settled = report(index, 'settled');
      if (settled) await settled;
      for (const dependant of node.dependants) {
        if (--waiting[dependant]! === 0 && states[dependant]!.status === 'pending') ready.push(dependant);
      }
    } else {
      state.status = 'failed';
      state.error = lastError;
      anyFailed = true;
      const settles: Promise<void>[] = [];
      const settled = report(index, 'settled');
      if (settled) settles.push(settled);
      for (const dependant of node.dependants) skipFrom(dependant, node.id, settles);
      if (settles.length > 0) await Promise.all(settles);
    }
    inFlight--;
    pump();
  }

  function attemptNode(index: number, attempt: number, timeoutMs: number): Promise<string> {
    const node = nodes[index]!;
    return runAttempt({
      executor,
      controllers,
      interruptWaiters,
      nodeId: node.id,
      timeoutMs,
      request: (signal) => ({
        runId,
        graphId,
        nodeId: node.id,
        agentId: node.agentId ?? options.defaultAgentId,
        ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
        prompt: renderSegments(node.template, inputs, outputOf),
        attempt,
        timeoutMs,
        signal,
      }),
    });
  }

  queueMicrotask(pump);

  return {
    done,
    get status() {
      return status;
    },
    cancel() {
      if (status !== 'running' || cancelRequested || interrupted) return false;
      cancelRequested = true;
      finishIfIdle();
      return true;
    },
    interrupt() {
      if (status !== 'running') return;
      interrupted = true;
      for (const controller of controllers) controller.abort(interruptedReason);
      for (const wake of [...interruptWaiters]) wake();
      finishIfIdle();
    },
    node(nodeId) {
      const index = graph.indexOf.get(nodeId);
      return index === undefined ? undefined : states[index];
    },
    nodes() {
      return nodes.map((node, index) => ({ id: node.id, ...states[index]! }));
    },
    output: outputOf,
  };
}

/**
 * One attempt of a node: the executor's answer, or a rejection at the time
 * limit (aborting the attempt) or at an interrupt, whichever comes first.
 */
function runAttempt(attempt: {
  executor: NodeExecutor;
  controllers: Set<AbortController>;
  interruptWaiters: Set<() => void>;
  nodeId: string;
  timeoutMs: number;
  request: (signal: AbortSignal) => NodeRequest;
}): Promise<string> {
  const { executor, controllers, interruptWaiters, nodeId, timeoutMs } = attempt;
  const controller = new AbortController();
  controllers.add(controller);
  let timer: NodeJS.Timeout | undefined;
  let onInterrupt: (() => void) | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new GraphError('NODE_TIMEOUT', `node '${nodeId}' timed out after ${timeoutMs} ms`);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
    onInterrupt = () => reject(interruptedReason);
    interruptWaiters.add(onInterrupt);
  });
  const request = attempt.request(controller.signal);
  const work = (async () => {
    const output: unknown = await executor.run(request);
    if (typeof output !== 'string') {
      throw new GraphError(
        'NODE_OUTPUT_INVALID',
        `node '${nodeId}': the executor returned a non-string output`,
      );
    }
    return output;
  })();
  return Promise.race([work, guard]).finally(() => {
    clearTimeout(timer);
    controllers.delete(controller);
    if (onInterrupt) interruptWaiters.delete(onInterrupt);
    // The losing side of the race must not surface as an unhandled rejection.
    work.catch(() => undefined);
    guard.catch(() => undefined);
  });
}

/** Waits `ms`, or less when an interrupt wakes every waiter. */
function pause(ms: number, interruptWaiters: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      interruptWaiters.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    interruptWaiters.add(wake);
  });
}

function ignore(): void {}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.slice(0, 1000);
  return String(error).slice(0, 1000);
}
