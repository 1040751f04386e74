import { createHttpClient } from '@agentd/client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import {
  ADMIN_TOKEN,
  type ConsoleDaemon,
  checkPage,
  launchChromium,
  login,
  openPage,
  startConsoleDaemon,
} from './harness.js';

interface Run {
  runId: string;
  status: string;
  rootRunId: string;
}

let daemon: ConsoleDaemon;
let browser: Browser;
let fake: FakeProvider;
let rpc: ReturnType<typeof createHttpClient>;
const contexts: Array<{ close(): Promise<void> }> = [];
const PARENT = 'default:rpc:console-runs';

beforeAll(async () => {
  // The `slow` agent's model (a local OpenAI-compatible fake) never answers within the test, so
  // its runs stay `running` until the page kills them; `quick` runs on the offline provider.
  fake = await startFakeOpenAi({ apiKey: 'k', respond: () => ({ hangMs: 120_000, text: 'late' }) });
  const timeouts = { turnMs: 120_000, stallMs: 90_000, toolMs: 60_000 };
  [daemon, browser] = await Promise.all([
    startConsoleDaemon(
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
    ),
    launchChromium(),
  ]);
  rpc = createHttpClient({ url: daemon.daemon.url, token: ADMIN_TOKEN, requestTimeoutMs: 120_000 });
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await fake?.close();
});

async function adminPage(hash: string, width = 1280): Promise<{ page: Page; problems: string[] }> {
  const { context, page, problems } = await openPage(browser, width);
  contexts.push(context);
  await login(page, daemon.daemon.url, ADMIN_TOKEN, hash);
  return { page, problems };
}

function spawn(agentId: string, task: string): Promise<Run> {
  return rpc.call('session.spawn', { parentKey: PARENT, task, agentId }) as Promise<Run>;
}

async function statusOf(runId: string): Promise<string> {
  return ((await rpc.call('session.run_status', { run_id: runId })) as Run).status;
}

describe('runs page', () => {
  it('lists sub-agent runs by tree and kills a running one from the page', async () => {
    const quick = await spawn('quick', 'say hello');
    await expect.poll(() => statusOf(quick.runId), { timeout: 30_000 }).toBe('completed');
    const slow = await spawn('slow', 'wait for the model');
    expect(await statusOf(slow.runId)).toBe('running');

    const { page, problems } = await adminPage('#/runs');
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
    const narrow = await adminPage(`#/runs/${slow.runId}`, 390);
    await expect.poll(() => narrow.page.getByTestId('run-status').textContent()).toBe('killed');
    expect(await narrow.page.getByText('Task: wait for the model').count()).toBe(1);
    await checkPage(narrow.page, 'runs');
    expect([...problems, ...narrow.problems]).toEqual([]);
  });

  it('steers a running run (respawned with the new task) and kills its tree', async () => {
    const run = await spawn('slow', 'first task');
    const { page, problems } = await adminPage(`#/runs/${run.runId}`);
    await expect
      .poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 })
      .toBe('running');
    await page.getByLabel('Steer message').fill('second task');
    await page.getByRole('button', { name: 'Steer' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Steered: run ${run.runId}`);
    const running = (await rpc.call('subagent.list', { status: 'running' })) as { runs: Run[] };
    const steered = running.runs.find((r) => r.runId !== run.runId);
    expect(steered).toBeDefined();
    expect(await statusOf(run.runId)).not.toBe('running');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Kill tree ${steered!.rootRunId}` }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain(`Killed run tree ${steered!.rootRunId}`);
    expect(await statusOf(steered!.runId)).toBe('killed');
    expect(((await rpc.call('subagent.list', { status: 'running' })) as { runs: Run[] }).runs).toEqual([]);
    expect(problems).toEqual([]);
  });
});

describe('channels page', () => {
  it('shows every channel type, the queue by stage after a webchat send, and recent deliveries', async () => {
    // No webchat client is connected as `nobody-here`: the delivery is refused, not retried.
    const sent = (await rpc.call('message.send', {
      channel_type: 'webchat',
      channel_id: 'nobody-here',
      text: 'hello from the test',
    })) as { status: string };
    expect(sent.status).toBe('deadLetter');
    const queue = (await rpc.call('delivery.queue.status')) as Record<string, number>;
    expect(queue.deadLetter).toBeGreaterThanOrEqual(1);
    const recent = (await rpc.call('obs.delivery.recent', { limit: 25 })) as {
      deliveries: Array<{ channelId: string; outcome: string }>;
    };
    expect(recent.deliveries).toContainEqual(
      expect.objectContaining({ channelId: 'nobody-here', outcome: 'failed', errorKind: 'permanent' }),
    );

    const { page, problems } = await adminPage('#/channels');
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
    const narrow = await adminPage('#/channels', 390);
    await expect.poll(() => narrow.page.getByTestId('channel-status-webchat').count()).toBe(1);
    await checkPage(narrow.page, 'channels');
    expect([...problems, ...narrow.problems]).toEqual([]);
  });
});
