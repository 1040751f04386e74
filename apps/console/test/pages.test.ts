import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, checkPage, startConsoleDaemon, useConsole } from './harness.js';

const INCIDENT_SESSION = 'default:rpc:incident-user';

const ui = useConsole(
  () =>
    startConsoleDaemon({
      gateway: { wsHeartbeatMs: 0 },
      // The cron page is checked against an empty list: no daemon-wide `Memory lifecycle` job.
      learning: { enabled: false },
      providers: { entries: { tiny: { type: 'offline', models: ['offline-nano'] } } },
      agents: {
        entries: {
          ops: {
            name: 'Ops',
            provider: 'tiny',
            tools: ['graph_execute'],
            toolBreaker: { failureThreshold: 2, cooldownMs: 600_000 },
          },
          helper: { name: 'Helper', provider: 'tiny', tools: ['memory_search'] },
        },
      },
    }),
  { rpcTimeoutMs: 60_000 },
);

beforeAll(async () => {
  const rpc = ui.rpc;
  // A session whose tool keeps failing until its breaker opens, for the incident report.
  for (let attempt = 0; attempt < 3; attempt++)
    await rpc.call('agent.execute', {
      agentId: 'ops',
      sessionKey: INCIDENT_SESSION,
      message: '/tool graph_execute {"graphId":"no-such-graph"}',
    });
  await rpc.call('agent.execute', {
    sessionKey: 'default:rpc:searchable',
    message: 'the blue giraffe report',
  });
  await rpc.call('memory.store', { content: 'The staging database lives on port 5433' });
  await rpc.call('memory.store', { content: 'The build cache lives on port 6543', agentId: 'helper' });
});

/** Destructive actions ask first; the tests confirm. */
const open = (hash: string, token = ADMIN_TOKEN, width = 1280) =>
  ui.open(hash, { token, width, acceptDialogs: true });

describe('console pages', () => {
  it('shows fleet health as charts and opens a session incident report from it', async () => {
    const { page, problems } = await open('#/fleet');
    await expect.poll(() => page.getByRole('heading', { name: /Likely root cause/ }).count()).toBe(1);
    // Four uPlot charts, each with a text alternative.
    await expect.poll(() => page.locator('agentd-bar-chart canvas').count()).toBe(4);
    expect(await page.getByRole('img', { name: /Tokens per hour/ }).count()).toBe(1);
    await checkPage(page, 'fleet');
    await page.getByRole('link', { name: INCIDENT_SESSION }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Incident report' }).count()).toBe(1);
    await expect.poll(() => page.getByRole('heading', { name: /Root cause:/ }).count()).toBe(1);
    const report = (await ui.rpc.call('obs.explain', { sessionKey: INCIDENT_SESSION })) as {
      likelyRootCause: { code: string };
      failures: Array<{ toolName: string }>;
      breakerTimeline: Array<{ event: string }>;
    };
    expect(await page.getByRole('heading', { name: /Root cause:/ }).textContent()).toContain(
      report.likelyRootCause.code,
    );
    expect(report.failures.length).toBe(3);
    expect(report.breakerTimeline.length).toBe(1);
    // The timeline merges the three failures and the breaker opening, in sequence order.
    const timeline = page.locator('ol.timeline li');
    expect(await timeline.count()).toBe(4);
    expect(await timeline.allTextContents()).toEqual([
      expect.stringContaining('graph_execute failed: tool_error'),
      expect.stringContaining('graph_execute failed: tool_error'),
      expect.stringContaining('graph_execute breaker opened'),
      expect.stringContaining('graph_execute failed: breaker_open'),
    ]);
    await checkPage(page, 'incident');
    expect(problems).toEqual([]);
  });

  it('streams a turn with a tool call and folds the call and its result', async () => {
    const { page, problems } = await open('#/chat');
    await page.getByLabel('Agent').selectOption('helper');
    await page.getByLabel('Session key').fill('default:rpc:tool-chat');
    await page.getByLabel('Session key').dispatchEvent('change');
    await page.getByRole('textbox', { name: 'Message' }).fill('/tool memory_search {"query":"build cache"}');
    await page.getByRole('button', { name: 'Send' }).click();
    const tool = page.locator('details.tool');
    await expect
      .poll(() => tool.locator('summary').textContent(), { timeout: 30_000 })
      .toMatch(/memory_search\s+ok/);
    // Folded until opened; then the input and the result, read back from the session's history.
    expect(await tool.getAttribute('open')).toBeNull();
    await tool.locator('summary').click();
    await expect.poll(() => tool.textContent()).toContain('port 6543');
    expect(await tool.textContent()).toContain('"query": "build cache"');
    await expect.poll(() => page.locator('ol.history details').count()).toBe(2);
    expect(await page.locator('ol.history').textContent()).toMatch(/tool result\s+memory_search/);
    await checkPage(page, 'chat-tool-call');
    expect(problems).toEqual([]);
  });

  it('lists, searches, exports and resets sessions, confirming the reset', async () => {
    const { page, problems } = await open('#/sessions');
    await page.getByLabel('Search messages').fill('giraffe');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect
      .poll(() => page.getByRole('button', { name: 'default:rpc:searchable' }).count())
      .toBeGreaterThan(0);
    await page.getByRole('button', { name: 'default:rpc:searchable' }).first().click();
    await expect.poll(() => page.getByText('the blue giraffe report').count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Export' }).click();
    await expect.poll(() => page.locator('details[open] pre').textContent()).toContain('giraffe');
    await checkPage(page, 'sessions');
    await page.getByRole('button', { name: 'Compact' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Compacted');
    await page.getByRole('button', { name: 'Reset' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Reset default:rpc:searchable');
    const history = (await ui.rpc.call('session.history', { key: 'default:rpc:searchable' })) as {
      messages: unknown[];
    };
    expect(history.messages).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('adds a cron job, runs it now and shows its run, then removes it', async () => {
    const { page, problems } = await open('#/cron');
    await page.getByLabel('Name').fill('console-job');
    await page.getByLabel('Every (minutes) / cron expression / time').fill('60');
    await page.getByLabel('Message').fill('cron from the console');
    await page.getByRole('button', { name: 'Add job' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Added job console-job');
    expect(await page.getByRole('cell', { name: 'every 60 min' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Run now' }).click();
    await expect
      .poll(() => page.getByTestId('cron-runs').textContent(), { timeout: 30_000 })
      .toContain('cron from the console');
    await checkPage(page, 'cron');
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Every (minutes) / cron expression / time').fill('30');
    await page.getByRole('button', { name: 'Save job' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'every 30 min' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Removed job console-job');
    expect(((await ui.rpc.call('cron.list')) as { jobs: unknown[] }).jobs).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('searches memory with scores and deletes an entry', async () => {
    const { page, problems } = await open('#/memory');
    await page.getByLabel('Search memories').fill('staging database');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.locator('h2:text("Results") + .table-wrap');
    await expect.poll(() => results.textContent()).toContain('port 5433');
    expect(await results.locator('td').first().textContent()).toMatch(/^\d\.\d{4}$/);
    await checkPage(page, 'memory');
    await results.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Deleted');
    const after = (await ui.rpc.call('memory.search', { query: 'staging database' })) as {
      results: unknown[];
    };
    expect(after.results).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('works with an rpc-only token and shows no admin page to it', async () => {
    const created = (await ui.rpc.call('tokens.create', { scopes: ['rpc'], id: 'console-rpc' })) as {
      token: string;
    };
    const { page, problems } = await open('#/config', created.token);
    // The admin route falls back to the first page; the navigation lists rpc pages only.
    await expect.poll(() => page.getByRole('heading', { name: 'Chat' }).count()).toBe(1);
    const nav = await page.getByRole('navigation', { name: 'Pages' }).textContent();
    for (const admin of ['Approvals', 'Fleet health', 'Runs', 'Channels', 'Config'])
      expect(nav).not.toContain(admin);
    for (const rpcPage of ['Chat', 'Sessions', 'Graph runs', 'Cron', 'Memory'])
      expect(nav).toContain(rpcPage);
    expect(await page.getByText('rpc token').count()).toBe(1);
    await page.getByRole('textbox', { name: 'Message' }).fill('hello with rpc');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByTestId('reply-text').textContent(), { timeout: 30_000 })
      .toContain('You said: "hello with rpc"');
    await page.getByRole('link', { name: 'Sessions' }).click();
    await expect.poll(() => page.getByRole('heading', { name: 'Sessions', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Reset' }).count()).toBe(0);
    await checkPage(page, 'sessions-rpc-token');
    expect(problems).toEqual([]);
  });

  it('renders every page at 390 px wide without sideways scrolling or serious axe violations', async () => {
    const { page, problems } = await open('#/chat', ADMIN_TOKEN, 390);
    const routes: Array<[string, string]> = [
      ['chat', 'Chat'],
      ['sessions', 'Sessions'],
      ['fleet', 'Fleet health'],
      [`incident/${encodeURIComponent(INCIDENT_SESSION)}`, 'Incident report'],
      ['approvals', 'Approvals'],
      ['graphs', 'Graph runs'],
      ['cron', 'Cron'],
      ['memory', 'Memory'],
      ['config', 'Config'],
    ];
    for (const [route, heading] of routes) {
      await page.evaluate((hash) => {
        window.location.hash = hash;
      }, `#/${route}`);
      await expect.poll(() => page.getByRole('heading', { name: heading, exact: true }).count()).toBe(1);
      // Let the page's first calls answer before measuring.
      await page.waitForLoadState('networkidle');
      await checkPage(page, route.split('/')[0]!);
    }
    expect(problems).toEqual([]);
  });
});
