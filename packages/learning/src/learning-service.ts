import { firstIssueText } from '@agentd/errors';
import type { AgentTurnRunner, EventSink, Logger, ObservedTurn } from '@agentd/contracts';
import type { Database } from '@agentd/storage';
import { type LearningSection, learningSectionSchema } from './config.js';
import { LearningError } from './errors.js';
import { LearningStore, type OutcomeRow, type ProcedureState } from './internal/store.js';

export type { LearningStatus } from './status.js';
import { learningMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { type LearningStatus, readStatus } from './status.js';
import { createSettlement } from './internal/settlement.js';
import { JUDGE_SESSION_PREFIX } from './judge.js';
import {
  followUpSignal,
  type OutcomeSource,
  procedureSignature,
  reactionSignal,
  resolveOutcome,
} from './outcome.js';
import { type AgentSweep, REFLECTION_SESSION_PREFIX, sweepAgent } from './sweep.js';

/** A finished turn as the runtime's turn observer hands it over. */
export type LearningTurn = ObservedTurn;

/** A message the agent sent to a chat, by the platform's ids. */
export interface ChannelMessageRef {
  channelType: string;
  channelId: string;
  messageId: string;
}

/** A user's reaction: on a known turn, or on a channel answer recorded with `noteAnswer`. */
export interface LearningReaction {
  traceId?: string | undefined;
  sessionKey?: string | undefined;
  answer?: ChannelMessageRef | undefined;
  emoji: string;
}

/** A learned procedure as the skills surface shows it (active and stale ones). */
export interface LearnedSkill {
  name: string;
  description: string;
  body: string;
  state: ProcedureState;
  signature: string;
}

/** Options of {@link createLearningService}. */
export interface LearningServiceOptions {
  db: Database;
  /** The `learning` config section (raw). */
  section?: unknown;
  events: EventSink;
  /** Runs the reflection turns (the daemon's agent runtime). */
  runner: AgentTurnRunner;
  /** False for agents whose model must not synthesize (offline provider, small or nano class). */
  canSynthesize(agentId: string): boolean;
  /** Deletes an evicted memory; undefined while memory is off. */
  evictMemory?: () => ((memoryId: string) => Promise<void>) | undefined;
  now?: () => number;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/** Learning from outcomes: observes turns, sweeps procedures and memories, answers status. */
export interface LearningService {
  start(): Promise<void>;
  /** Records a finished turn (queued; never throws into the turn). */
  observeTurn(turn: LearningTurn): void;
  /** Notes that the turn `traceId` loaded skill `name` (the `skill_read` tool). */
  noteSkillRead(traceId: string, name: string): void;
  /**
   * A user's reaction on the answer of turn `traceId` (or, without one, the session's last
   * turn): an approving emoji makes it `success`, a rejecting one `failure` (source `reaction`);
   * other emoji and pipeline failures are left alone. Queued; never throws.
   */
  noteReaction(reaction: LearningReaction): void;
  /**
   * Records that the channel message `answer` is the answer of turn `traceId` of `sessionKey`,
   * so a reaction on it (`noteReaction({answer})`), even after a restart, settles that turn.
   * Kept `retainOutcomesDays`; queued.
   */
  noteAnswer(answer: ChannelMessageRef & { sessionKey: string; traceId?: string | undefined }): void;
  /** Notes the memories recalled before the coming turn of `sessionKey`. */
  noteRecall(sessionKey: string, memoryIds: readonly string[]): void;
  /** Sweeps every agent with something to sweep; the `Memory lifecycle` cron job runs it. */
  sweep(): Promise<{ agents: AgentSweep[]; summary: string }>;
  status(agentId?: string): Promise<LearningStatus>;
  /** Active and stale learned procedures of an agent (archived ones are dropped from this surface). */
  learnedSkills(agentId: string): Promise<LearnedSkill[]>;
  /**
   * Drops a session's outcome rows (they hold the start of its user messages) when the session
   * is deleted or its conversation reset; queued behind pending observations.
   */
  forgetSession(sessionKey: string): Promise<void>;
  /** Resolves when every queued observation, and every running judge's verdict, is written. */
  idle(): Promise<void>;
  /** Waits for queued observations and a running sweep (shutdown, before the database closes). */
  close(): Promise<void>;
  applyConfig(section: unknown): void;
  readonly enabled: boolean;
}

/** Tools that read instructions or offloaded results: not part of a procedure. */
const META_TOOLS = new Set(['skill_read', 'offload_read']);
/** Characters of the user message kept as a reflection example. */
const MESSAGE_CHARS = 500;

/** Creates the learning service; call `start()` (migrations) first. */
export function createLearningService(options: LearningServiceOptions): LearningService {
  let section = parse(options.section);
  const now = options.now ?? Date.now;
  const store = new LearningStore(options.db);
  const skillReads = new Map<string, Set<string>>();
  const recalls = new Map<string, string[]>();
  let queue: Promise<void> = Promise.resolve();
  let sweeping: Promise<{ agents: AgentSweep[]; summary: string }> | undefined;
  const signals = createSettlement({
    store,
    events: options.events,
    runner: options.runner,
    canSynthesize: options.canSynthesize,
    judgeEnabled: () => section.judge.enabled,
    enqueue: (work) => enqueue(work),
    ...(options.logger ? { logger: options.logger } : {}),
  });

  const bounded = <V>(map: Map<string, V>, key: string, value: V) => {
    if (!map.has(key) && map.size >= 5000) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
    map.set(key, value);
  };

  async function observe(turn: LearningTurn, reads: string[], memories: string[]): Promise<void> {
    const signal = followUpSignal(turn.message);
    const corrected = signal
      ? await resolvePrevious(turn.sessionKey, signal.outcome, signal.source)
      : undefined;
    const tools = turn.tools.filter((tool) => !META_TOOLS.has(tool.name));
    const { outcome, sources } = resolveOutcome({ endReason: turn.endReason, tools });
    const signature = procedureSignature(tools);
    const learned = await store.procedures(turn.agentId, ['candidate', 'active', 'stale']);
    const used = learned.filter(
      (procedure) =>
        reads.includes(procedure.name) || (signature !== '' && procedure.signature === signature),
    );
    const skillsUsed = [...new Set([...reads, ...used.map((procedure) => procedure.name)])];
    await store.insertOutcome({
      traceId: turn.traceId,
      sessionKey: turn.sessionKey,
      agentId: turn.agentId,
      origin: turn.origin,
      outcome,
      sources,
      signature,
      message: turn.message.slice(0, MESSAGE_CHARS),
      skillsUsed,
      memories,
      createdAt: turn.at,
    });
    for (const id of memories) await store.countRecall(id, turn.agentId, outcome, turn.at);
    const failed = outcome === 'failure' || outcome === 'corrected';
    // A message that only corrects the previous answer reports that correction: it is what the
    // learning layer observed at this turn (and what names a failing learned skill).
    const shown =
      outcome === 'unknown' && corrected
        ? {
            outcome: 'corrected' as const,
            sources: ['correction' as const],
            skillsUsed: corrected.skillsUsed.length,
            skillFailures: learned.filter((procedure) => corrected.skillsUsed.includes(procedure.name))
              .length,
          }
        : { outcome, sources, skillsUsed: skillsUsed.length, skillFailures: failed ? used.length : 0 };
    await signals.emitObserved(turn, shown, failed ? memories.length : 0);
    if (outcome === 'unknown' && !corrected) signals.judge(turn);
  }

  function enqueue(work: () => Promise<void>): void {
    queue = queue.then(work).catch((error: unknown) =>
      options.logger?.warn(
        {
          err: error,
          errorKind: 'internal',
          hint: 'the turn is recorded; only its learning row is missing',
        },
        'turn outcome not recorded',
      ),
    );
  }

  /**
   * A correction or confirmation in the next message resolves the session's previous turn;
   * answers the previous turn when it was corrected.
   */
  async function resolvePrevious(
    sessionKey: string,
    outcome: 'corrected' | 'success',
    source: OutcomeSource,
  ): Promise<OutcomeRow | undefined> {
    const previous = await store.lastOutcome(sessionKey);
    if (!previous) return undefined;
    // A confirmation only settles what was unknown; a correction overrides anything but a pipeline failure.
    if (outcome === 'success' && previous.outcome !== 'unknown') return undefined;
    if (outcome === 'corrected' && previous.sources.includes('pipeline')) return undefined;
    const sources = [...new Set([...previous.sources, source])];
    await store.updateOutcome(previous.id, outcome, sources);
    return outcome === 'corrected' ? previous : undefined;
  }

  async function runSweep(): Promise<{ agents: AgentSweep[]; summary: string }> {
    await queue;
    const evict = options.evictMemory?.();
    const agents: AgentSweep[] = [];
    for (const agentId of await store.agentsToSweep()) {
      const swept = await sweepAgent(
        {
          store,
          section,
          events: options.events,
          runner: options.runner,
          canSynthesize: options.canSynthesize,
          evictMemory: evict,
          now,
        },
        agentId,
      );
      signals.noteSweep(agentId, swept.synthesisAbstained);
      agents.push(swept);
    }
    await store.pruneAnswers(now() - section.retainOutcomesDays * 24 * 60 * 60 * 1000);
    const total = (key: 'scanned' | 'promoted' | 'demoted' | 'evicted') =>
      agents.reduce((sum, agent) => sum + agent[key], 0);
    const abstainers = agents.filter((agent) => agent.synthesisAbstained).map((agent) => agent.agentId);
    const summary =
      `Memory lifecycle: ${agents.length} agent(s) swept; scanned ${total('scanned')}, promoted ${total('promoted')}, ` +
      `demoted ${total('demoted')}, evicted ${total('evicted')}` +
      (abstainers.length > 0 ? `; synthesis abstained (low capability) for ${abstainers.join(', ')}` : '');
    return { agents, summary };
  }

  return {
    get enabled() {
      return section.enabled;
    },
    async start() {
      await options.db.migrate(MIGRATION_PACKAGE, learningMigrationSet);
    },
    observeTurn(turn) {
      if (
        !section.enabled ||
        turn.synthetic ||
        turn.sessionKey.startsWith(REFLECTION_SESSION_PREFIX) ||
        turn.sessionKey.startsWith(JUDGE_SESSION_PREFIX)
      )
        return;
      // Taken now, not when the queue gets to it: the session's next turn may recall again before then.
      const reads = [...(skillReads.get(turn.traceId) ?? [])];
      skillReads.delete(turn.traceId);
      const memories = recalls.get(turn.sessionKey) ?? [];
      recalls.delete(turn.sessionKey);
      enqueue(() => observe(turn, reads, memories));
    },
    noteReaction(reaction) {
      const outcome = reactionSignal(reaction.emoji);
      if (!section.enabled || !outcome) return;
      enqueue(() => signals.settle(reaction, outcome, 'reaction'));
    },
    noteAnswer(answer) {
      if (!section.enabled) return;
      enqueue(() => store.insertAnswer(answer, now()));
    },
    noteSkillRead(traceId, name) {
      const names = skillReads.get(traceId) ?? new Set<string>();
      names.add(name);
      bounded(skillReads, traceId, names);
    },
    noteRecall(sessionKey, memoryIds) {
      if (memoryIds.length > 0) bounded(recalls, sessionKey, [...memoryIds].slice(0, 50));
    },
    sweep() {
      if (!section.enabled)
        return Promise.reject(new LearningError('DISABLED', 'learning is disabled (learning.enabled)'));
      // One sweep at a time; a sweep asked for during one shares its answer.
      sweeping ??= runSweep().finally(() => {
        sweeping = undefined;
      });
      return sweeping;
    },
    async status(agentId) {
      await queue;
      return readStatus(options.db, agentId);
    },
    async learnedSkills(agentId) {
      return (await store.procedures(agentId, ['active', 'stale'])).map((procedure) => ({
        name: procedure.name,
        description: procedure.description,
        body: procedure.body,
        state: procedure.state,
        signature: procedure.signature,
      }));
    },
    forgetSession(sessionKey) {
      recalls.delete(sessionKey);
      const forgotten = queue.then(async () => {
        await options.db.execute('DELETE FROM learning_outcomes WHERE session_key = ?', [sessionKey]);
        await options.db.execute('DELETE FROM learning_answers WHERE session_key = ?', [sessionKey]);
      });
      queue = forgotten.catch(() => undefined);
      return forgotten;
    },
    async idle() {
      await queue;
      // A judge's verdict is queued when it arrives: wait for the judges, then for their settlements.
      await signals.judged();
      await queue;
    },
    async close() {
      await signals.judged();
      await queue;
      await sweeping?.catch(() => undefined);
    },
    applyConfig(raw) {
      section = parse(raw);
    },
  };
}

function parse(raw: unknown): LearningSection {
  const parsed = learningSectionSchema.safeParse(raw ?? {});
  if (!parsed.success)
    throw new LearningError('INVALID_OPTIONS', firstIssueText('learning.', parsed.error.issues));
  return parsed.data;
}
