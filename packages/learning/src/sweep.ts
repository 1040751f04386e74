import type { AgentTurnRunner, EventSink } from '@agentd/contracts';
import type { LearningSection } from './config.js';
import type { LearningStore, OutcomeRow, Procedure } from './internal/store.js';
import {
  type AdmissionOutcome,
  clusterSuccesses,
  type FunnelCounts,
  reflectionPrompt,
  UNTRUSTED_ORIGINS,
  validateReflection,
} from './reflection.js';

/** What one agent's sweep did (`learning:lifecycle_swept` plus the funnel's outcome). */
export interface AgentSweep {
  agentId: string;
  scanned: number;
  promoted: number;
  demoted: number;
  archived: number;
  evicted: number;
  memoriesDemoted: number;
  admissionOutcome: AdmissionOutcome;
  synthesisAbstained: boolean;
}

/** What a sweep needs besides the store. */
export interface SweepDeps {
  store: LearningStore;
  section: LearningSection;
  events: EventSink;
  runner: AgentTurnRunner;
  /** Whether the agent's model may synthesize procedures (false: the offline provider, a small or nano class). */
  canSynthesize(agentId: string): boolean;
  /** Deletes a memory (eviction); undefined while memory is off. */
  evictMemory?: ((memoryId: string) => Promise<void>) | undefined;
  now(): number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Most clusters synthesized per agent and sweep (each is one model call). */
const MAX_SYNTHESES = 3;

/** Sessions of reflection turns: not themselves observed as learning turns. */
export const REFLECTION_SESSION_PREFIX = 'learning:reflect:';

/**
 * Sweeps one agent: moves its learned procedures through their lifecycle from the uses since
 * the last sweep, admits new candidates through the reflection funnel, demotes and evicts
 * memories that recall but never help, then emits the contract's events.
 */
export async function sweepAgent(deps: SweepDeps, agentId: string): Promise<AgentSweep> {
  const { store, section, events } = deps;
  const rows = await store.unswept(agentId);
  const procedures = await store.procedures(agentId);
  const live = procedures.filter((procedure) => procedure.state !== 'archived');
  const moves = advanceProcedures(live, rows, section, deps.now());
  for (const procedure of moves.changed) await store.saveProcedure(procedure);

  const signatures = [
    ...new Set(
      rows.filter((row) => row.outcome === 'success' && row.signature !== '').map((row) => row.signature),
    ),
  ];
  const earlier = await store.earlierSuccesses(
    agentId,
    signatures,
    deps.now() - section.retainOutcomesDays * DAY_MS,
    [...UNTRUSTED_ORIGINS],
  );
  const { counts, corroborated } = clusterSuccesses(rows, procedures, section.admitAfter, earlier);
  let synthesisAbstained = false;
  if (corroborated.length > 0) {
    if (!deps.canSynthesize(agentId)) {
      // An offline or small model would write procedures nobody should trust: say so, write none.
      synthesisAbstained = true;
      counts.skipped = corroborated.length;
      counts.admissionOutcome = 'empty_reflection';
    } else {
      await synthesize(deps, agentId, corroborated.slice(0, MAX_SYNTHESES), procedures, counts);
      counts.skipped = Math.max(0, corroborated.length - MAX_SYNTHESES);
    }
  }
  const timestamp = deps.now();
  events.emit('reflect:funnel', { agentId, ...counts, timestamp });
  if (counts.admitted > 0) events.emit('reflect:admitted', { agentId, count: counts.admitted, timestamp });

  const memory = await sweepMemories(deps, agentId);
  const attributed = rows.reduce(
    (sum, row) => sum + (row.outcome === 'failure' || row.outcome === 'corrected' ? row.memories.length : 0),
    0,
  );
  await store.markSwept(rows.map((row) => row.id));
  const skillsDemoted = moves.demoted + moves.archived;
  // The sweep's `demoted` counts procedures and memories alike (the fleet finding sums them).
  const demoted = skillsDemoted + memory.demoted;
  const sweep: AgentSweep = {
    agentId,
    scanned: rows.length + live.length + memory.scanned,
    promoted: moves.promoted,
    demoted,
    archived: moves.archived,
    evicted: memory.evicted,
    memoriesDemoted: memory.demoted,
    admissionOutcome: counts.admissionOutcome,
    synthesisAbstained,
  };
  await store.db.execute(
    `INSERT INTO learning_sweeps (agent_id, at, scanned, promoted, demoted, evicted, admission_outcome,
       synthesis_abstained, result) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'ok')`,
    [
      agentId,
      timestamp,
      sweep.scanned,
      sweep.promoted,
      demoted,
      memory.evicted,
      counts.admissionOutcome,
      synthesisAbstained ? 1 : 0,
    ],
  );
  // After this sweep's row: the rows it read, and older sweep rows, past the retention go.
  await store.prune(agentId, timestamp - section.retainOutcomesDays * DAY_MS);
  if (moves.promoted > 0)
    events.emit('learning:skill_promoted', { agentId, count: moves.promoted, timestamp });
  if (skillsDemoted > 0) events.emit('learning:skill_demoted', { agentId, count: skillsDemoted, timestamp });
  if (memory.demoted > 0)
    events.emit('learning:memory_demoted', { agentId, count: memory.demoted, timestamp });
  if (memory.evicted > 0)
    events.emit('learning:memory_evicted', { agentId, count: memory.evicted, timestamp });
  if (attributed > 0)
    events.emit('learning:memory_failure_attributed', { agentId, count: attributed, timestamp });
  events.emit('learning:lifecycle_swept', {
    agentId,
    scanned: sweep.scanned,
    promoted: sweep.promoted,
    demoted: sweep.demoted,
    evicted: sweep.evicted,
    timestamp,
  });
  return sweep;
}

/**
 * The Learned procedure transitions, each corroboration-gated by distinct sessions: a
 * candidate with `promoteAfter` successful uses becomes active; an active one with
 * `demoteAfter` failed or corrected uses becomes stale; a stale one with `demoteAfter` more
 * becomes archived.
 */
function advanceProcedures(
  live: Procedure[],
  rows: readonly OutcomeRow[],
  section: LearningSection,
  now: number,
): { changed: Procedure[]; promoted: number; demoted: number; archived: number } {
  const changed: Procedure[] = [];
  let promoted = 0;
  let demoted = 0;
  let archived = 0;
  for (const procedure of live) {
    const uses = rows.filter((row) => row.skillsUsed.includes(procedure.name));
    if (uses.length === 0) continue;
    for (const use of uses) {
      const list =
        use.outcome === 'success'
          ? procedure.successes
          : use.outcome === 'unknown'
            ? undefined
            : procedure.failures;
      if (list && !list.includes(use.sessionKey)) list.push(use.sessionKey);
    }
    if (procedure.state === 'candidate' && procedure.successes.length >= section.promoteAfter) {
      procedure.state = 'active';
      procedure.failures = [];
      promoted++;
    } else if (procedure.state === 'active' && procedure.failures.length >= section.demoteAfter) {
      procedure.state = 'stale';
      procedure.failures = [];
      demoted++;
    } else if (procedure.state === 'stale' && procedure.failures.length >= section.demoteAfter) {
      procedure.state = 'archived';
      archived++;
    }
    procedure.updatedAt = now;
    changed.push(procedure);
  }
  return { changed, promoted, demoted, archived };
}

/** Asks the agent's own model for each cluster's SKILL.md and admits the valid ones as candidates. */
async function synthesize(
  deps: SweepDeps,
  agentId: string,
  clusters: ReturnType<typeof clusterSuccesses>['corroborated'],
  procedures: Procedure[],
  counts: FunnelCounts,
): Promise<void> {
  const taken = new Set(procedures.map((procedure) => procedure.name));
  let last: AdmissionOutcome = 'empty_reflection';
  for (const cluster of clusters) {
    const answer = await deps.runner.runTurn({
      agentId,
      sessionKey: `${REFLECTION_SESSION_PREFIX}${agentId}`,
      message: reflectionPrompt(cluster),
      origin: 'cron',
      allowedTools: [],
    } as Parameters<AgentTurnRunner['runTurn']>[0]);
    counts.synthesized++;
    const verdict = validateReflection(answer.response, taken);
    if (!verdict.ok) {
      if (verdict.outcome === 'rejected_name_length') counts.nameLengthRejections++;
      last = verdict.outcome;
      continue;
    }
    counts.validated++;
    const now = deps.now();
    await deps.store.insertProcedure({
      agentId,
      name: verdict.name,
      signature: cluster.signature,
      description: verdict.description,
      body: verdict.body,
      state: 'candidate',
      successes: [],
      failures: [],
      createdAt: now,
      updatedAt: now,
    });
    taken.add(verdict.name);
    counts.admitted++;
  }
  counts.admissionOutcome = counts.admitted > 0 ? 'admitted' : last;
}

/** Memories recalled `demoteAfterRecalls` times without a successful turn are demoted; past `evictAfterRecalls`, evicted. */
async function sweepMemories(
  deps: SweepDeps,
  agentId: string,
): Promise<{ scanned: number; demoted: number; evicted: number }> {
  const { memory } = deps.section;
  const stats = await deps.store.memoryStats(agentId);
  let demoted = 0;
  let evicted = 0;
  for (const stat of stats) {
    if (stat.helped > 0) continue;
    if (stat.state === 'demoted' && stat.recalls >= memory.evictAfterRecalls && deps.evictMemory) {
      await deps.evictMemory(stat.memory_id);
      await deps.store.setMemoryState(stat.memory_id, 'evicted');
      evicted++;
    } else if (stat.state === 'active' && stat.recalls >= memory.demoteAfterRecalls) {
      await deps.store.setMemoryState(stat.memory_id, 'demoted');
      demoted++;
    }
  }
  return { scanned: stats.length, demoted, evicted };
}
