import type { AgentTurnRunner, EventSink, Logger } from '@agentd/contracts';
import { judgeTurn } from '../judge.js';
import type { ChannelMessageRef, LearningTurn } from '../learning-service.js';
import type { OutcomeSource } from '../outcome.js';
import type { LearningStore } from './store.js';

/** What {@link createSettlement} needs of the service. */
export interface SettlementDeps {
  store: LearningStore;
  events: EventSink;
  runner: AgentTurnRunner;
  canSynthesize(agentId: string): boolean;
  judgeEnabled(): boolean;
  /** Queues work behind the pending observations. */
  enqueue(work: () => Promise<void>): void;
  logger?: Pick<Logger, 'warn'>;
}

/** What the report shows of one observed or settled turn. */
export interface ShownOutcome {
  outcome: string;
  sources: OutcomeSource[];
  skillsUsed: number;
  skillFailures: number;
}

/**
 * The `learning:observed` rows and the later signals that settle a recorded turn: a judge's
 * verdict and a user's reaction.
 */
export function createSettlement(deps: SettlementDeps) {
  const { store } = deps;
  const abstained = new Map<string, boolean>();
  const judging = new Set<Promise<void>>();

  /** The IncidentReport's `learning` block: one `learning:observed` row per observed or settled turn. */
  async function emitObserved(
    turn: Pick<LearningTurn, 'sessionKey' | 'traceId' | 'agentId'>,
    shown: ShownOutcome,
    failuresAttributed: number,
  ): Promise<void> {
    // Whether the agent's last sweep abstained: read once per agent, then kept by the sweeps.
    let abstainedNow = abstained.get(turn.agentId);
    if (abstainedNow === undefined) {
      abstainedNow = await store.lastSweepAbstained(turn.agentId);
      abstained.set(turn.agentId, abstainedNow);
    }
    deps.events.emit('learning:observed', {
      sessionKey: turn.sessionKey,
      traceId: turn.traceId,
      agentId: turn.agentId,
      outcomeResolved: shown.outcome !== 'unknown',
      ...(shown.outcome === 'unknown' ? {} : { outcome: shown.outcome }),
      sources: shown.sources,
      skillsUsed: shown.skillsUsed,
      skillFailures: shown.skillFailures,
      synthesisAbstained: abstainedNow,
      ...(failuresAttributed > 0 ? { failuresAttributed } : {}),
    });
  }

  /**
   * Settles a recorded turn from a later signal (a judge's verdict, a user's reaction): a
   * pipeline failure stands; a judge only settles what is still unknown; a reaction, the user's
   * own word, settles anything else.
   */
  async function settle(
    reference: { traceId?: string | undefined; sessionKey?: string | undefined; answer?: ChannelMessageRef },
    outcome: 'success' | 'failure',
    source: 'judge' | 'reaction',
  ): Promise<void> {
    const target = reference.answer ? await store.answer(reference.answer) : reference;
    if (!target) return;
    const row = target.traceId
      ? await store.outcomeByTrace(target.traceId)
      : target.sessionKey
        ? await store.lastOutcome(target.sessionKey)
        : undefined;
    if (!row || row.sources.includes('pipeline')) return;
    if (source === 'judge' && row.outcome !== 'unknown') return;
    const sources = [...new Set([...row.sources, source])];
    await store.updateOutcome(row.id, outcome, sources);
    const learned = await store.procedures(row.agentId, ['candidate', 'active', 'stale']);
    const failed = outcome === 'failure';
    await emitObserved(
      row,
      {
        outcome,
        sources,
        skillsUsed: row.skillsUsed.length,
        skillFailures: failed
          ? learned.filter((procedure) => row.skillsUsed.includes(procedure.name)).length
          : 0,
      },
      failed ? row.memories.length : 0,
    );
  }

  /**
   * A turn nothing else resolved goes to the judge when one is configured and the agent's
   * model is capable; it runs beside the queue (a slow model never holds up status or the next
   * observation) and its verdict is queued as a settlement.
   */
  function judge(turn: LearningTurn): void {
    if (!deps.judgeEnabled() || !turn.response || !deps.canSynthesize(turn.agentId)) return;
    const response = turn.response;
    const running: Promise<void> = judgeTurn(deps.runner, { ...turn, response })
      .then((verdict) => {
        if (verdict) deps.enqueue(() => settle({ traceId: turn.traceId }, verdict, 'judge'));
      })
      .catch((error: unknown) =>
        deps.logger?.warn(
          { err: error, errorKind: 'dependency', hint: 'the turn keeps its unknown outcome' },
          'learning judge failed',
        ),
      )
      .finally(() => judging.delete(running));
    judging.add(running);
  }

  return {
    emitObserved,
    settle,
    judge,
    /** Keeps what the agent's latest sweep said about abstention. */
    noteSweep(agentId: string, synthesisAbstained: boolean): void {
      abstained.set(agentId, synthesisAbstained);
    },
    /** Resolves when every running judge has answered. */
    async judged(): Promise<void> {
      await Promise.all([...judging]);
    },
  };
}
