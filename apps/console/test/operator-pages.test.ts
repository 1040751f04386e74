import { afterAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { ADMIN_TOKEN, checkPage, startConsoleDaemon, useConsole } from './harness.js';

interface Run {
  runId: string;
  status: string;
  rootRunId: string;
}

let fake: FakeProvider;
const PARENT = 'default:rpc:console-runs';

// Registered before the fixture's hooks so it runs after them (vitest runs afterAll hooks
// last-registered first): the fake provider closes once the daemon has stopped.
afterAll(async () => {
  await fake?.close();
});

const ui = useConsole(async () => {
  // The `slow` agent's model (a local OpenAI-compatible fake) never answers within the test, so
  // its runs stay `running` until the page kills them; `quick` runs on the offline provider.
  fake = await startFakeOpenAi({ apiKey: 'k', respond: () => ({ hangMs: 120_000, text: 'late' }) });
  const timeouts = { turnMs: 120_000, stallMs: 90_000, toolMs: 60_000 };
  return startConsoleDaemon(
    {
      gateway: { wsHeartbeatMs: 0 },
      providers: {
        entries: {
          fake: { type: 'openai-compatible', baseUrl: fake.url, apiKey: '${secret:K}', models: ['m'] },
        },
      },
      agents: {
        entries: {
          quick: { name: 'Quick', timeouts },
          slow: { name: 'Slow', provider: 'fake', timeouts },
        },
      },
    },
    { env: { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN, K: 'k' } },
  );
});

function spawn(agentId: string, task: string): Promise<Run> {
  return ui.rpc.call('session.spawn', { parentKey: PARENT, task, agentId }) as Promise<Run>;
}

async function statusOf(runId: string): Promise<string> {
  return ((await ui.rpc.call('session.run_status', { run_id: runId })) as Run).status;
}

describe('runs page', () => {
  it('lists sub-agent runs by tree and kills a running one from the page', async () => {
    const quick = await spawn('quick', 'say hello');
    await expect.poll(() => statusOf(quick.runId), { timeout: 30_000 }).toBe('completed');
    const slow = await spawn('slow', 'wait for the model');
    expect(await statusOf(slow.runId)).toBe('running');

    const { page, problems } = await ui.open('#/runs');
    const status = (runId: string) => page.getByTestId(`status-${runId}`);
    await expect.poll(() => status(slow.runId).textContent(), { timeout: 30_000 }).toBe('running');
    expect(await status(quick.runId).textContent()).toBe('completed');
    expect(await page.getByRole('region', { name: /Run tree/ }).count()).toBe(2);
    await checkPage(page, 'runs');

    // Kill asks first; a dismissed confirmation kills nothing.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: `Kill run ${slow.runId}` }).click();
    expect(await statusOf(slow.runId)).toBe('running');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Kill run ${slow.runId}` }).click();
    await expect.poll(() => status(slow.runId).textContent(), { timeout: 30_000 }).toBe('killed');
    expect(await statusOf(slow.runId)).toBe('killed');
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Killed run ${slow.runId}`);

    // The status filter asks subagent.list for killed runs only.
    await page.getByLabel('Status').selectOption('killed');
    await expect.poll(() => status(quick.runId).count()).toBe(0);
    expect(await status(slow.runId).textContent()).toBe('killed');

    // The run's own record, at 390 px.
    const narrow = await ui.open(`#/runs/${slow.runId}`, { width: 390 });
    await expect.poll(() => narrow.page.getByTestId('run-status').textContent()).toBe('killed');
    expect(await narrow.page.getByText('Task: wait for the model').count()).toBe(1);
    await checkPage(narrow.page, 'runs');
    expect([...problems, ...narrow.problems]).toEqual([]);
  });

  it('steers a running run (respawned with the new task) and kills its tree', async () => {
    const run = await spawn('slow', 'first task');
    const { page, problems } = await ui.open(`#/runs/${run.runId}`);
    await expect
      .poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 })
      .toBe('running');
    await page.getByLabel('Steer message').fill('second task');
    await page.getByRole('button', { name: 'Steer' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Steered: run ${run.runId}`);
    const running = (await ui.rpc.call('subagent.list', { status: 'running' })) as { runs: Run[] };
    const steered = running.runs.find((r) => r.runId !== run.runId);
    expect(steered).toBeDefined();
    expect(await statusOf(run.runId)).not.toBe('running');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Kill tree ${steered!.rootRunId}` }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain(`Killed run tree ${steered!.rootRunId}`);
    expect(await statusOf(steered!.runId)).toBe('killed');
    expect(((await ui.rpc.call('subagent.list', { status: 'running' })) as { runs: Run[] }).runs).toEqual([]);
    expect(problems).toEqual([]);
  });
});

describe('channels page', () => {
  it('shows every channel type, the queue by stage after a webchat send, and recent deliveries', async () => {
    // No webchat client is connected as `nobody-here`: the delivery is refused, not retried.
    const sent = (await ui.rpc.call('message.send', {
      channel_type: 'webchat',
      channel_id: 'nobody-here',
      text: 'hello from the test',
    })) as { status: string };
    expect(sent.status).toBe('deadLetter');
    const queue = (await ui.rpc.call('delivery.queue.status')) as Record<string, number>;
    expect(queue.deadLetter).toBeGreaterThanOrEqual(1);
    const recent = (await ui.rpc.call('obs.delivery.recent', { limit: 25 })) as {
      deliveries: Array<{ channelId: string; outcome: string }>;
    };
    expect(recent.deliveries).toContainEqual(
      expect.objectContaining({ channelId: 'nobody-here', outcome: 'failed', errorKind: 'permanent' }),
    );

    const { page, problems } = await ui.open('#/channels');
    await expect.poll(() => page.getByTestId('channel-status-webchat').count()).toBe(1);
    for (const platform of ['telegram', 'discord', 'slack', 'whatsapp'])
      expect(await page.getByTestId(`channel-status-${platform}`).textContent()).toBe('unconfigured');
    const cell = (table: string, stage: string) =>
      page.locator(`table[data-testid="${table}"] td[data-stage="${stage}"]`);
    await expect.poll(() => cell('queue-all', 'deadLetter').textContent()).toBe(String(queue.deadLetter));
    expect(await cell('queue-all', 'sent').textContent()).toBe(String(queue.sent));
    expect(await cell('queue-webchat', 'deadLetter').textContent()).toBe(String(queue.deadLetter));
    expect(await cell('queue-telegram', 'deadLetter').textContent()).toBe('0');
    const deliveries = page.getByRole('region', { name: 'Recent deliveries' });
    await expect.poll(() => deliveries.textContent()).toContain('nobody-here');
    expect(await deliveries.textContent()).toMatch(/failed\s+\d+ ms\s+permanent/);
    await checkPage(page, 'channels');
    const narrow = await ui.open('#/channels', { width: 390 });
    await expect.poll(() => narrow.page.getByTestId('channel-status-webchat').count()).toBe(1);
    await checkPage(narrow.page, 'channels');
    expect([...problems, ...narrow.problems]).toEqual([]);
  });
});
