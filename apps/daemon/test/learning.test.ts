import { afterEach, describe, expect, it } from 'vitest';
import { startFakeSlack } from '../../../packages/channels/test/fake-slack.js';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { signedSlackPost } from './channel-helpers.js';
import { daemonPool, eventually, openAiProviders, rpcClient, rpcFailure } from './helpers.js';

type Json = Record<string, unknown>;
type Run = { status: string; summary?: string };

const pool = daemonPool('agentd-learning-');
afterEach(() => pool.cleanup());

const SKILL =
  '---\nname: define-pipeline\ndescription: Defines a one-node pipeline for a request.\ntools: [graph_define]\n---\n1. Call graph_define with one node.\n';

/**
 * A model that defines a graph for "good" requests; for "bad" ones it loads the learned skill
 * and then runs a graph that does not exist (the call fails); it writes SKILL.md when asked to reflect.
 */
function respond(body: Record<string, unknown>) {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const user = messages.filter((message) => message.role === 'user').at(-1);
  const text = typeof user?.content === 'string' ? user.content : '';
  if (text.includes('You are writing down a procedure')) return { text: SKILL };
  if (text.startsWith('No,')) return { text: 'sorry' };
  const toolResults = messages
    .slice(messages.indexOf(user as never))
    .filter((message) => message.role === 'tool').length;
  const call = (name: string, input: unknown) => ({
    toolCalls: [{ id: `call-${Math.random().toString(36).slice(2)}`, name, input }],
    finishReason: 'tool_calls' as const,
  });
  if (!text.includes('bad'))
    return toolResults === 0 ? call('graph_define', { nodes: [{ id: 'a', prompt: 'x' }] }) : { text: 'done' };
  if (toolResults === 0) return call('skill_read', { name: 'define-pipeline' });
  if (toolResults === 1) return call('graph_execute', { graphId: 'no-such-graph' });
  return { text: 'that failed' };
}

async function sweep(admin: ReturnType<typeof rpcClient>, count: number): Promise<Run> {
  await admin.call('cron.run', { name: 'Memory lifecycle' });
  const runs = await eventually(async () => {
    const { runs } = (await admin.call('cron.runs', { jobName: 'Memory lifecycle' })) as { runs: Run[] };
    return runs.length >= count ? runs : undefined;
  });
  return runs[0] as Run;
}

describe('learning through the daemon', () => {
  it('takes a procedure from candidate to active to stale to archived, with events and report blocks', async () => {
    const fake = pool.closeAfter(await startFakeOpenAi({ apiKey: 'sk-learn', respond }));
    const daemon = await pool.start(pool.tempDir(), {
      env: { OAI_KEY: 'sk-learn' },
      config: {
        learning: { enabled: true },
        providers: openAiProviders('oai', fake.url, 'OAI_KEY', ['gpt-fake'], {
          capabilities: { capabilityClass: 'mid' },
        }),
        agents: { entries: { ann: { name: 'Ann', provider: 'oai', tools: ['graph_*', 'skill_read'] } } },
      },
    });
    const admin = rpcClient(daemon.url);
    const turn = (session: string, kind: 'good' | 'bad') =>
      admin.call('agent.execute', {
        agentId: 'ann',
        sessionKey: `acme:rpc:${session}`,
        message: `a ${kind} request`,
      });

    expect(((await admin.call('cron.list')) as { jobs: Json[] }).jobs).toContainEqual(
      expect.objectContaining({ name: 'Memory lifecycle', scheduleKind: 'interval' }),
    );
    await turn('s1', 'good');
    await turn('s2', 'good');
    const first = await sweep(admin, 1);
    expect(first).toMatchObject({ status: 'ok' });
    expect(first.summary).toMatch(/^Memory lifecycle: 1 agent\(s\) swept/);
    expect(await admin.call('learning.status', { agentId: 'ann' })).toMatchObject({
      procedures: { candidate: 1, active: 0, stale: 0, archived: 0 },
      outcomes: { success: 2 },
      lastSweep: { result: 'ok', admissionOutcome: 'admitted', synthesisAbstained: false },
    });

    await turn('s3', 'good');
    await turn('s4', 'good');
    await sweep(admin, 2);
    expect(((await admin.call('learning.status', { agentId: 'ann' })) as Json).procedures).toMatchObject({
      active: 1,
    });
    const listed = (await admin.call('skills.list', { agentId: 'ann' })) as { skills: Json[] };
    expect(listed.skills).toContainEqual(
      expect.objectContaining({ name: 'define-pipeline', source: 'learned', trust: 'learned' }),
    );

    // The active procedure is reused, and the user corrects the answer: the learned skill is failing.
    await turn('s5', 'good');
    await admin.call('agent.execute', {
      agentId: 'ann',
      sessionKey: 'acme:rpc:s5',
      message: "No, that's wrong",
    });
    const corrected = (await admin.call('obs.explain', { sessionKey: 'acme:rpc:s5' })) as {
      learning: Json;
      likelyRootCause: { code: string };
    };
    expect(corrected.learning).toMatchObject({
      outcome: 'corrected',
      sources: ['correction'],
      skillFailures: 1,
    });
    expect(corrected.likelyRootCause.code).toBe('learned_skill_failing');
    await turn('s5', 'bad');
    await turn('s6', 'bad');
    await sweep(admin, 3);
    expect(((await admin.call('learning.status', { agentId: 'ann' })) as Json).procedures).toMatchObject({
      stale: 1,
    });
    const report = (await admin.call('obs.explain', { sessionKey: 'acme:rpc:s6' })) as Json;
    expect(report.learning).toEqual({
      outcomeResolved: true,
      outcome: 'failure',
      sources: ['tool'],
      skillsUsed: 1,
      skillFailures: 1,
      synthesisAbstained: false,
    });

    await turn('s7', 'bad');
    await turn('s8', 'bad');
    await sweep(admin, 4);
    expect(((await admin.call('learning.status', { agentId: 'ann' })) as Json).procedures).toEqual({
      candidate: 0,
      active: 0,
      stale: 0,
      archived: 1,
    });
    const after = (await admin.call('skills.list', { agentId: 'ann' })) as { skills: Json[] };
    expect(after.skills.filter((skill) => skill.source === 'learned')).toEqual([]);

    const health = (await admin.call('obs.fleet.health', {})) as {
      findings: Array<{ code: string; count: number }>;
    };
    expect(health.findings).toContainEqual(expect.objectContaining({ code: 'memory_lifecycle', count: 3 }));
    const swept = (await admin.call('obs.diagnostics', { category: 'learning:lifecycle_swept' })) as {
      events: Json[];
    };
    expect(swept.events).toHaveLength(4);
    // A deleted session takes its outcome rows along.
    expect(((await admin.call('learning.status', { agentId: 'ann' })) as Json).outcomes).toMatchObject({
      success: 4,
      failure: 4,
    });
    await admin.call('session.delete', { session_key: 'acme:rpc:s1' });
    await eventually(async () => {
      const status = (await admin.call('learning.status', { agentId: 'ann' })) as {
        outcomes: { success: number };
      };
      return status.outcomes.success === 3 ? status : undefined;
    });
    const promoted = (await admin.call('obs.diagnostics', { category: 'learning:skill_promoted' })) as {
      events: Json[];
    };
    expect(promoted.events).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ agentId: 'ann', count: 1 }) }),
    ]);
  }, 60_000);

  it('abstains from synthesis with the offline provider, honestly, and the report says why', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        learning: { enabled: true },
        agents: { entries: { off: { name: 'Offline', tools: ['graph_*'] } } },
      },
    });
    const admin = rpcClient(daemon.url);
    for (const session of ['o1', 'o2']) {
      await admin.call('agent.execute', {
        agentId: 'off',
        sessionKey: `acme:rpc:${session}`,
        message: '/tool graph_define {"nodes":[{"id":"a","prompt":"x"}]}',
      });
    }
    const run = await sweep(admin, 1);
    expect(run.summary).toContain('synthesis abstained (low capability) for off');
    expect(await admin.call('learning.status', { agentId: 'off' })).toMatchObject({
      procedures: { candidate: 0 },
      lastSweep: { synthesisAbstained: true },
    });
    await admin.call('agent.execute', { agentId: 'off', sessionKey: 'acme:rpc:o3', message: 'thanks' });
    const report = (await admin.call('obs.explain', { sessionKey: 'acme:rpc:o3' })) as {
      learning: Json;
      likelyRootCause: { code: string };
    };
    expect(report.learning).toMatchObject({ synthesisAbstained: true });
    expect(report.likelyRootCause.code).toBe('synthesis_abstained_low_capability');
    const funnel = (await admin.call('obs.diagnostics', { category: 'reflect:funnel' })) as {
      events: Json[];
    };
    expect(funnel.events.at(-1)).toMatchObject({
      data: expect.objectContaining({ synthesized: 0, skipped: 1 }),
    });
  }, 60_000);

  it('demotes, then evicts from the memory store, a memory that is recalled but never helps', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        learning: { enabled: true, memory: { demoteAfterRecalls: 2, evictAfterRecalls: 3 } },
        agents: { entries: { keeper: { name: 'Keeper', memory: { autoRecall: true } } } },
      },
    });
    const admin = rpcClient(daemon.url);
    const stored = (await admin.call('memory.store', {
      content: 'the user keeps a pet kiwi bird named Pip',
      agentId: 'keeper',
    })) as { id: string };
    const ask = () =>
      admin.call('agent.execute', {
        agentId: 'keeper',
        message: 'what is the name of my kiwi bird?',
        sessionKey: 'keeper:webchat:alice',
      });
    await ask();
    await ask();
    await sweep(admin, 1);
    expect(((await admin.call('learning.status', { agentId: 'keeper' })) as Json).memory).toEqual({
      tracked: 1,
      demoted: 1,
    });
    const demoted = (await admin.call('obs.diagnostics', { category: 'learning:memory_demoted' })) as {
      events: Json[];
    };
    expect(demoted.events).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ agentId: 'keeper', count: 1 }) }),
    ]);
    await ask();
    const run = await sweep(admin, 2);
    expect(run.summary).toContain('evicted 1');
    expect((await rpcFailure(admin.call('memory.inspect', { id: stored.id }))).code).toBe(-32004);
    const swept = (await admin.call('obs.diagnostics', { category: 'learning:lifecycle_swept' })) as {
      events: Json[];
    };
    expect(swept.events).toContainEqual(
      expect.objectContaining({ data: expect.objectContaining({ agentId: 'keeper', evicted: 1 }) }),
    );
  }, 60_000);

  it("settles a Slack turn by the judge, then by the user's reaction on the answer", async () => {
    const fake = pool.closeAfter(
      await startFakeOpenAi({
        apiKey: 'sk-judge',
        respond: (body) => {
          const messages = body.messages as Array<{ role: string; content: unknown }>;
          const last = messages.filter((message) => message.role === 'user').at(-1)?.content;
          return { text: String(last).includes('You are judging') ? 'SUCCESS' : 'the deploy is green' };
        },
      }),
    );
    const slack = pool.closeAfter(await startFakeSlack({ token: 'xoxb-learn-slack-token-000000' }));
    const daemon = await pool.start(pool.tempDir(), {
      env: { OAI_KEY: 'sk-judge' },
      config: {
        learning: { enabled: true, judge: { enabled: true } },
        providers: openAiProviders('oai', fake.url, 'OAI_KEY', ['gpt-fake'], {
          capabilities: { capabilityClass: 'mid' },
        }),
        agents: { entries: { ann: { name: 'Ann', provider: 'oai' } } },
        channels: {
          slack: {
            enabled: true,
            botToken: 'xoxb-learn-slack-token-000000',
            signingSecret: 'learn-signing-secret',
            apiBaseUrl: slack.url,
            agentId: 'ann',
            allowFrom: ['U1'],
          },
        },
      },
    });
    const admin = rpcClient(daemon.url);
    const post = (event: Json) =>
      signedSlackPost(daemon.url, { type: 'event_callback', event }, 'learn-signing-secret');
    await post({
      type: 'message',
      channel: 'C7',
      user: 'U1',
      text: 'is the deploy ok?',
      ts: '1700000000.000100',
    });
    const answer = await eventually(async () => slack.posted('C7')[0]);
    expect(answer.text).toBe('the deploy is green');
    const session = 'default:slack-C7:U1';
    const judged = await eventually(async () => {
      const report = (await admin.call('obs.explain', { sessionKey: session })) as { learning?: Json };
      return report.learning?.outcome === 'success' ? report.learning : undefined;
    });
    expect(judged).toMatchObject({ outcomeResolved: true, sources: ['judge'] });

    // A thumbs-down from someone not allowed is ignored; the asker's own one settles the turn.
    await post({
      type: 'reaction_added',
      user: 'U9',
      reaction: '-1',
      item: { type: 'message', channel: 'C7', ts: answer.ts },
    });
    await post({
      type: 'reaction_added',
      user: 'U1',
      reaction: '-1',
      item: { type: 'message', channel: 'C7', ts: answer.ts },
    });
    const reacted = await eventually(async () => {
      const report = (await admin.call('obs.explain', { sessionKey: session })) as { learning?: Json };
      return report.learning?.outcome === 'failure' ? report.learning : undefined;
    });
    expect(reacted).toMatchObject({ outcomeResolved: true, sources: ['judge', 'reaction'] });
    expect(await admin.call('learning.status', { agentId: 'ann' })).toMatchObject({
      outcomes: { failure: 1 },
    });
  }, 60_000);

  it('keeps the Memory lifecycle job by default and drops it when learning is switched off, live and at start', async () => {
    const dataDir = pool.tempDir();
    const daemon = await pool.start(dataDir);
    const admin = rpcClient(daemon.url);
    const jobs = async () =>
      ((await admin.call('cron.list')) as { jobs: Array<{ name: string }> }).jobs.map((job) => job.name);
    expect(await jobs()).toEqual(['Memory lifecycle']);
    await admin.call('config.patch', { learning: { enabled: false } });
    expect(await jobs()).toEqual([]);
    await admin.call('config.patch', { learning: { enabled: true } });
    expect(await jobs()).toEqual(['Memory lifecycle']);
    // Switched off while the daemon was down: the next start drops the job it finds.
    await daemon.stop();
    const again = await pool.start(dataDir, { config: { learning: { enabled: false } } });
    expect(((await rpcClient(again.url).call('cron.list')) as { jobs: unknown[] }).jobs).toEqual([]);
  }, 60_000);
});
