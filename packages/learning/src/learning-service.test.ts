import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTurnRequest } from '@agentd/contracts';
import type { Database } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, openDialectDatabase } from '../test/dialects.js';
import { createLearningService, type LearningService, type LearningTurn } from './learning-service.js';

let dir: string;
let db: Database;
let events: Array<[string, Record<string, unknown>]>;
let reflections: AgentTurnRequest[];
let reflectionAnswer: string;
let clock: number;

const SKILL =
  '---\nname: define-pipeline\ndescription: Defines a pipeline from a request.\ntools: [graph_define]\n---\n1. Call graph_define.\n';

async function service(
  options: { capable?: boolean; evicted?: string[]; section?: unknown } = {},
): Promise<LearningService> {
  const learning = createLearningService({
    db,
    section: { enabled: true, ...(options.section as object | undefined) },
    events: { emit: (event, payload) => events.push([event, payload as Record<string, unknown>]) },
    runner: {
      runTurn: async (request) => {
        reflections.push(request);
        return {
          response: reflectionAnswer,
          sessionKey: request.sessionKey ?? '',
          tokensUsed: { input: 1, output: 1, total: 2 },
          finishReason: 'stop',
        };
      },
    },
    canSynthesize: () => options.capable ?? true,
    evictMemory: () => async (id) => {
      options.evicted?.push(id);
    },
    now: () => clock++,
  });
  await learning.start();
  return learning;
}

let traces = 0;
function turn(
  sessionKey: string,
  tools: Array<[string, boolean]>,
  extra: Partial<LearningTurn> = {},
): LearningTurn {
  return {
    agentId: 'ann',
    sessionKey,
    traceId: `t${++traces}`,
    origin: 'rpc',
    message: `please do the thing in ${sessionKey}`,
    endReason: 'completed',
    tools: tools.map(([name, ok]) => ({ name, ok })),
    synthetic: false,
    at: clock++,
    ...extra,
  };
}

const named = (name: string) => events.filter(([event]) => event === name).map(([, payload]) => payload);

// Every test runs on each dialect: the same body on libsql and on PostgreSQL.
describe.each(DIALECTS)('on %s', (dialect) => {
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'learning-'));
    db = await openDialectDatabase(dialect, dir);
    events = [];
    reflections = [];
    reflectionAnswer = SKILL;
    clock = 1_000;
  });

  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('the learning lifecycle', () => {
    it('admits a repeated procedure, promotes, demotes and archives it, with the contract events', async () => {
      const learning = await service();
      const observe = async (sessionKey: string, ok: boolean) => {
        learning.observeTurn(turn(sessionKey, [['graph_define', ok]]));
        await learning.idle();
      };
      await observe('s1', true);
      await observe('s2', true);
      await learning.sweep();
      expect(named('reflect:funnel').at(-1)).toMatchObject({
        agentId: 'ann',
        synthesized: 1,
        validated: 1,
        admitted: 1,
        maxClusterCardinality: 2,
        admissionOutcome: 'admitted',
      });
      expect(named('reflect:admitted')).toEqual([expect.objectContaining({ agentId: 'ann', count: 1 })]);
      expect(reflections[0]?.message).toContain('graph_define');
      expect(reflections[0]?.sessionKey).toBe('learning:reflect:ann');
      expect((await learning.status('ann')).procedures).toEqual({
        candidate: 1,
        active: 0,
        stale: 0,
        archived: 0,
      });
      expect(await learning.learnedSkills('ann')).toEqual([]);

      // Two corroborating successes from distinct sessions: active.
      await observe('s3', true);
      await observe('s3', true);
      await learning.sweep();
      expect((await learning.status('ann')).procedures.active).toBe(0);
      await observe('s4', true);
      const swept = await learning.sweep();
      expect(swept.agents[0]).toMatchObject({ promoted: 1 });
      expect(named('learning:skill_promoted')).toEqual([
        expect.objectContaining({ agentId: 'ann', count: 1 }),
      ]);
      expect((await learning.learnedSkills('ann')).map((skill) => [skill.name, skill.state])).toEqual([
        ['define-pipeline', 'active'],
      ]);

      // Failed reuse from two sessions: stale; two more: archived and off the surface.
      await observe('s5', false);
      await observe('s6', false);
      await learning.sweep();
      expect(named('learning:skill_demoted')).toEqual([expect.objectContaining({ count: 1 })]);
      expect((await learning.learnedSkills('ann')).map((skill) => skill.state)).toEqual(['stale']);
      const failing = named('learning:observed').at(-1);
      expect(failing).toMatchObject({
        outcomeResolved: true,
        outcome: 'failure',
        sources: ['tool'],
        skillsUsed: 1,
        skillFailures: 1,
      });
      await observe('s7', false);
      await observe('s8', false);
      await learning.sweep();
      expect(await learning.learnedSkills('ann')).toEqual([]);
      const status = await learning.status('ann');
      expect(status.procedures).toEqual({ candidate: 0, active: 0, stale: 0, archived: 1 });
      expect(status.lastSweep).toMatchObject({ result: 'ok', demoted: 1 });
      expect(named('learning:lifecycle_swept')).toHaveLength(5);
      expect(named('learning:lifecycle_swept').at(-1)).toEqual({
        agentId: 'ann',
        scanned: 3,
        promoted: 0,
        demoted: 1,
        evicted: 0,
        timestamp: expect.any(Number),
      });
    });

    it('abstains honestly when the model cannot synthesize', async () => {
      const learning = await service({ capable: false });
      for (const key of ['a', 'b']) learning.observeTurn(turn(key, [['graph_define', true]]));
      const swept = await learning.sweep();
      expect(swept.agents[0]).toMatchObject({
        synthesisAbstained: true,
        admissionOutcome: 'empty_reflection',
      });
      expect(swept.summary).toContain('synthesis abstained');
      expect(reflections).toEqual([]);
      expect(named('reflect:funnel').at(-1)).toMatchObject({ synthesized: 0, skipped: 1, admitted: 0 });
      learning.observeTurn(turn('c', []));
      await learning.idle();
      expect(named('learning:observed').at(-1)).toMatchObject({
        synthesisAbstained: true,
        outcomeResolved: false,
      });
      expect((await learning.status()).lastSweep?.synthesisAbstained).toBe(true);
    });

    it.each([
      ['no_successes', [['a', false]], SKILL],
      [
        'untrusted_origin',
        [
          ['a', true, 'hook'],
          ['b', true, 'hook'],
        ],
        SKILL,
      ],
      [
        'uncorroborated',
        [
          ['a', true],
          ['a', true],
        ],
        SKILL,
      ],
      [
        'empty_reflection',
        [
          ['a', true],
          ['b', true],
        ],
        '   ',
      ],
      [
        'rejected_name_length',
        [
          ['a', true],
          ['b', true],
        ],
        `---\nname: ${'x'.repeat(80)}\ndescription: d\n---\nbody`,
      ],
      [
        'rejected_validation',
        [
          ['a', true],
          ['b', true],
        ],
        'just prose, no front matter',
      ],
    ] as const)('reports the funnel outcome %s', async (outcome, turns, answer) => {
      reflectionAnswer = answer;
      const learning = await service();
      for (const [key, ok, origin] of turns as ReadonlyArray<readonly [string, boolean, string?]>) {
        learning.observeTurn(turn(key, [['graph_define', ok]], origin ? { origin } : {}));
      }
      await learning.sweep();
      expect(named('reflect:funnel').at(-1)?.admissionOutcome).toBe(outcome);
      if (outcome === 'rejected_name_length')
        expect(named('reflect:funnel').at(-1)?.nameLengthRejections).toBe(1);
    });

    it('resolves outcomes from corrections, confirmations and the pipeline', async () => {
      const learning = await service();
      learning.observeTurn(turn('s', [['graph_define', true]]));
      learning.observeTurn(turn('s', [], { message: "No, that's not what I asked" }));
      learning.observeTurn(turn('s', [], { message: 'explain' }));
      learning.observeTurn(turn('s', [], { message: 'Thanks, that worked!' }));
      learning.observeTurn(turn('s', [], { endReason: 'timeout' }));
      await learning.idle();
      // The correcting message's own row reports the correction it made.
      expect(named('learning:observed')[1]).toMatchObject({
        outcomeResolved: true,
        outcome: 'corrected',
        sources: ['correction'],
        skillsUsed: 0,
        skillFailures: 0,
      });
      expect((await learning.status()).outcomes).toEqual({
        success: 1,
        failure: 1,
        corrected: 1,
        unknown: 2,
      });
      const rows = await db.query<{ outcome: string; sources: string }>(
        'SELECT outcome, sources FROM learning_outcomes ORDER BY id',
      );
      expect(rows.map((row) => [row.outcome, JSON.parse(row.sources)])).toEqual([
        ['corrected', ['tool', 'correction']],
        ['unknown', []],
        // The confirmation settles the turn before it ('explain'), which had no signal of its own.
        ['success', ['explicit']],
        ['unknown', []],
        ['failure', ['pipeline']],
      ]);
      // A deleted session takes its outcome rows (and their message text) with it.
      learning.observeTurn(turn('gone', [['graph_define', true]]));
      await learning.forgetSession('gone');
      expect(await db.query('SELECT id FROM learning_outcomes WHERE session_key = ?', ['gone'])).toEqual([]);
      // Reflection turns and synthetic turns are not observed.
      learning.observeTurn(turn('learning:reflect:ann', [['graph_define', true]]));
      learning.observeTurn(turn('x', [['graph_define', true]], { synthetic: true }));
      await learning.idle();
      expect((await learning.status()).outcomes.success).toBe(1);
    });

    it('demotes memories that recall but never help, then evicts them, attributing failures', async () => {
      const evicted: string[] = [];
      const learning = await service({
        evicted,
        section: { memory: { demoteAfterRecalls: 2, evictAfterRecalls: 3 } },
      });
      const recalled: Array<[string[], boolean | undefined]> = [
        [['mem_good'], true],
        [['mem_useless', 'mem_good'], false],
        [['mem_useless'], undefined],
      ];
      for (const [ids, ok] of recalled) {
        learning.noteRecall('s', ids);
        learning.observeTurn(turn('s', ok === undefined ? [] : [['graph_define', ok]]));
        if (ok === false) {
          await learning.idle();
          expect(named('learning:observed').at(-1)).toMatchObject({
            outcome: 'failure',
            failuresAttributed: 2,
          });
        }
      }
      await learning.sweep();
      expect(named('learning:memory_demoted')).toEqual([
        expect.objectContaining({ agentId: 'ann', count: 1 }),
      ]);
      expect(named('learning:memory_failure_attributed')).toEqual([expect.objectContaining({ count: 2 })]);
      learning.noteRecall('s', ['mem_useless']);
      learning.observeTurn(turn('s', []));
      await learning.sweep();
      expect(evicted).toEqual(['mem_useless']);
      expect(named('learning:memory_evicted')).toEqual([expect.objectContaining({ count: 1 })]);
      expect(named('learning:lifecycle_swept').at(-1)).toMatchObject({ evicted: 1 });
    });
  });

  describe('corroboration across sweeps', () => {
    it('admits a procedure whose successes in distinct sessions fell into different sweep windows', async () => {
      const learning = await service();
      learning.observeTurn(turn('s1', [['graph_define', true]]));
      learning.observeTurn(turn('hooked', [['graph_define', true]], { origin: 'hook' }));
      await learning.idle();
      await learning.sweep();
      expect(named('reflect:funnel').at(-1)).toMatchObject({
        admitted: 0,
        admissionOutcome: 'uncorroborated',
      });
      // Another day, another session: with the earlier (swept) success it is corroborated.
      learning.observeTurn(turn('s2', [['graph_define', true]]));
      await learning.idle();
      await learning.sweep();
      expect(named('reflect:funnel').at(-1)).toMatchObject({
        admitted: 1,
        maxClusterCardinality: 2,
        admissionOutcome: 'admitted',
      });
      expect((await learning.status('ann')).procedures.candidate).toBe(1);
      // Once learned, the signature is not clustered again.
      learning.observeTurn(turn('s3', [['graph_define', true]]));
      await learning.idle();
      await learning.sweep();
      expect(reflections).toHaveLength(1);
    });

    it('never counts an untrusted (webhook) success as corroboration', async () => {
      const learning = await service();
      learning.observeTurn(turn('hook:1', [['graph_define', true]], { origin: 'hook' }));
      await learning.idle();
      await learning.sweep();
      learning.observeTurn(turn('s1', [['graph_define', true]]));
      await learning.idle();
      await learning.sweep();
      expect(named('reflect:funnel').at(-1)).toMatchObject({ admitted: 0, maxClusterCardinality: 1 });
    });
  });

  describe('reactions and the judge', () => {
    const outcomes = () =>
      db.query<{ trace_id: string; outcome: string; sources: string }>(
        'SELECT trace_id, outcome, sources FROM learning_outcomes ORDER BY id',
      );

    it('a reaction settles the turn it answers: approving, rejecting, ignored and pipeline-failed', async () => {
      const learning = await service();
      const first = turn('s:1', []);
      const second = turn('s:1', [['graph_define', true]]);
      const broken = turn('s:1', [], { endReason: 'error' });
      for (const observed of [first, second, broken]) learning.observeTurn(observed);
      learning.noteReaction({ traceId: first.traceId, sessionKey: 's:1', emoji: '+1' });
      learning.noteReaction({ traceId: second.traceId, sessionKey: 's:1', emoji: '👎🏽' });
      learning.noteReaction({ traceId: broken.traceId, sessionKey: 's:1', emoji: 'thumbsup' });
      learning.noteReaction({ traceId: first.traceId, sessionKey: 's:1', emoji: 'eyes' });
      await learning.idle();
      expect(await outcomes()).toEqual([
        { trace_id: first.traceId, outcome: 'success', sources: '["reaction"]' },
        { trace_id: second.traceId, outcome: 'failure', sources: '["tool","reaction"]' },
        { trace_id: broken.traceId, outcome: 'failure', sources: '["pipeline"]' },
      ]);
      const observed = events.filter(([name]) => name === 'learning:observed').map(([, payload]) => payload);
      expect(observed.at(-1)).toMatchObject({
        traceId: second.traceId,
        outcomeResolved: true,
        outcome: 'failure',
        sources: ['tool', 'reaction'],
      });
      // Without a trace the session's last turn is the one reacted to.
      learning.noteReaction({ sessionKey: 's:1', emoji: '👍' });
      await learning.idle();
      expect((await outcomes()).at(-1)).toMatchObject({ outcome: 'failure', sources: '["pipeline"]' });
    });

    it('a reaction on a recorded channel answer settles its turn, also after a restart', async () => {
      const first = await service();
      const answered = turn('default:slack-C7:U1', []);
      first.observeTurn(answered);
      const answer = { channelType: 'slack', channelId: 'C7', messageId: '17.1' };
      first.noteAnswer({ ...answer, sessionKey: answered.sessionKey, traceId: answered.traceId });
      await first.close();
      // Another process life: only the database remembers the answer.
      const second = await service();
      second.noteReaction({ answer: { ...answer, messageId: '99.9' }, emoji: '+1' });
      second.noteReaction({ answer, emoji: '-1' });
      await second.idle();
      expect(await outcomes()).toEqual([
        { trace_id: answered.traceId, outcome: 'failure', sources: '["reaction"]' },
      ]);
      // A deleted session takes its answers along.
      await second.forgetSession(answered.sessionKey);
      expect(await db.query('SELECT * FROM learning_answers')).toEqual([]);
    });

    it('a reaction after the sweep read the turn still demotes the learned procedure it used', async () => {
      const learning = await service({ section: { promoteAfter: 1, demoteAfter: 1 } });
      const observe = async (sessionKey: string) => {
        const observed = turn(sessionKey, [['graph_define', true]]);
        learning.observeTurn(observed);
        await learning.idle();
        return observed;
      };
      await observe('s1');
      await observe('s2');
      await learning.sweep();
      await observe('s3');
      await learning.sweep();
      expect((await learning.learnedSkills('ann')).map((skill) => skill.state)).toEqual(['active']);
      const reused = await observe('s4');
      await learning.sweep();
      expect((await learning.learnedSkills('ann')).map((skill) => skill.state)).toEqual(['active']);
      // The user's thumbs-down comes in after that sweep: the next one counts the failed reuse.
      learning.noteReaction({ traceId: reused.traceId, sessionKey: 's4', emoji: '👎' });
      await learning.idle();
      await learning.sweep();
      expect((await learning.learnedSkills('ann')).map((skill) => skill.state)).toEqual(['stale']);
    });

    it('the judge settles unknown turns through the runner when configured, and only then', async () => {
      reflectionAnswer = 'SUCCESS — the answer does what was asked';
      const off = await service();
      off.observeTurn(turn('s:1', [], { response: 'here it is' }));
      await off.idle();
      expect(reflections).toHaveLength(0);

      const learning = await service({ section: { judge: { enabled: true } } });
      const plain = turn('s:2', [], { response: 'here it is', message: 'summarize the log' });
      learning.observeTurn(plain);
      learning.observeTurn(turn('s:2', [['graph_define', false]], { response: 'failed' }));
      await learning.idle();
      // Only the turn without other evidence is judged, in its own session, without tools.
      expect(reflections).toHaveLength(1);
      expect(reflections[0]).toMatchObject({
        agentId: 'ann',
        sessionKey: 'learning:judge:ann',
        allowedTools: [],
      });
      expect(reflections[0]?.message).toContain('summarize the log');
      expect(reflections[0]?.message).toContain('here it is');
      expect((await outcomes()).find((row) => row.trace_id === plain.traceId)).toMatchObject({
        outcome: 'success',
        sources: '["judge"]',
      });
      // The judge's own turns are never observed.
      learning.observeTurn(turn('learning:judge:ann', [], { response: 'SUCCESS' }));
      reflectionAnswer = 'UNSURE';
      const unsure = turn('s:3', [], { response: 'maybe' });
      learning.observeTurn(unsure);
      await learning.idle();
      expect((await outcomes()).find((row) => row.trace_id === unsure.traceId)).toMatchObject({
        outcome: 'unknown',
      });
      const judged = await db.query("SELECT 1 FROM learning_outcomes WHERE session_key LIKE 'learning:%'");
      expect(judged).toEqual([]);
    });

    it('a small model is never asked to judge', async () => {
      const learning = await service({ capable: false, section: { judge: { enabled: true } } });
      learning.observeTurn(turn('s:1', [], { response: 'ok' }));
      await learning.idle();
      expect(reflections).toHaveLength(0);
    });
  });
});
