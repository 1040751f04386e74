import type { DaemonOptions } from '@agentd/daemon';
import { afterAll, describe, expect, it } from 'vitest';
import { checkPage, startConsoleDaemon, useConsole } from './harness.js';

type Json = Record<string, unknown>;

// Graph node `hold` runs until the test releases it, so a run stays active while the page cancels it.
let release: () => void = () => undefined;
const executor: NonNullable<DaemonOptions['graphExecutor']> = {
  run: (request) =>
    request.nodeId === 'hold'
      ? new Promise((resolve) => {
          release = () => resolve('held output');
        })
      : Promise.resolve(`output of ${request.nodeId}`),
};

const ui = useConsole(() =>
  startConsoleDaemon(
    {
      gateway: { wsHeartbeatMs: 0 },
      providers: { entries: { tiny: { type: 'offline', models: ['offline-nano'] } } },
      agents: { entries: { ops: { name: 'Ops', provider: 'tiny', tools: ['graph_define'] } } },
      approvals: { enabled: true, defaultMode: 'require' },
    },
    { graphExecutor: executor },
  ),
);

// Runs before the fixture stops the daemon, which would otherwise wait on the held node.
afterAll(() => release());

describe('admin pages', () => {
  it('resolves an approval from the page while a turn waits on it', async () => {
    const { page, problems } = await ui.open('#/approvals');
    await expect.poll(() => page.getByText('No tool call is waiting for approval.').count()).toBe(1);
    const turn = ui.rpc.call('agent.execute', {
      agentId: 'ops',
      sessionKey: 'default:rpc:console-approval',
      message: `/tool graph_define ${JSON.stringify({ nodes: [{ id: 'a', prompt: 'from the console' }] })}`,
    }) as Promise<{ response: string }>;
    let settled = false;
    void turn.finally(() => {
      settled = true;
    });
    // The request arrives through the approval.requested notification, without a reload.
    const card = page.getByRole('region', { name: /Approval request/ });
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    expect(await card.textContent()).toContain('graph_define');
    expect(settled).toBe(false);
    await checkPage(page, 'approvals');
    await card.getByLabel('Reason').fill('checked in the console');
    await card.getByRole('button', { name: 'Approve' }).click();
    expect((await turn).response).toMatch(/Tool graph_define returned: .*graphId/);
    await expect
      .poll(() => page.getByText(/Approved graph_define .*: checked in the console/).count())
      .toBe(1);
    await expect.poll(() => card.count()).toBe(0);
    // The decision is audited as the admin token's, allowed.
    const audit = (await ui.rpc.call('obs.audit.query', { kind: 'approval' })) as {
      rows: Array<{ classification: string; refs: Json }>;
    };
    expect(audit.rows).toContainEqual(
      expect.objectContaining({
        classification: 'allowed',
        refs: expect.objectContaining({ action: 'resolve' }),
      }),
    );
    expect(problems).toEqual([]);
  });

  it('draws a running graph run and cancels it from the page', async () => {
    const { graphId } = (await ui.rpc.call('graph.define', {
      nodes: [
        { id: 'hold', prompt: 'wait' },
        { id: 'after', prompt: 'then {{nodes.hold.output}}', dependsOn: ['hold'] },
        { id: 'side', prompt: 'also', dependsOn: ['hold'] },
      ],
    })) as { graphId: string };
    const { runId } = (await ui.rpc.call('graph.execute', { graphId })) as { runId: string };
    const { page, problems } = await ui.open(`#/graphs/${runId}`);
    const node = (id: string) => page.locator(`svg.dag g[data-node="${id}"]`);
    await expect.poll(() => node('hold').getAttribute('data-status'), { timeout: 30_000 }).toBe('running');
    expect(await node('after').getAttribute('data-status')).toBe('pending');
    expect(await page.locator('svg.dag path[marker-end]').count()).toBe(2);
    await checkPage(page, 'graph-run');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await expect
      .poll(async () => ((await ui.rpc.call('graph.runDetail', { runId })) as Json).cancelRequested)
      .toBe(true);
    release();
    await expect
      .poll(() => page.getByTestId('run-status').textContent(), { timeout: 30_000 })
      .toBe('cancelled');
    await expect.poll(() => node('after').getAttribute('data-status')).toBe('cancelled');
    expect(((await ui.rpc.call('graph.status', { runId })) as Json).status).toBe('cancelled');
    // The node that was in flight finished, and its output is on the page.
    await expect.poll(() => node('hold').getAttribute('data-status')).toBe('completed');
    await expect.poll(() => page.getByText('held output').count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it('edits a config value through the generated form, shows the diff, and the change is in config.history', async () => {
    const before = (await ui.rpc.call('config.history', { limit: 50 })) as {
      entries: Array<{ sha: string }>;
    };
    const { page, problems } = await ui.open('#/config');
    await page.getByLabel('Section').selectOption('heartbeat');
    const interval = page.getByLabel('intervalMs');
    await expect.poll(() => interval.inputValue()).toBe('1800000');
    await interval.fill('600000');
    await interval.dispatchEvent('change');
    await page.getByRole('button', { name: 'Review changes' }).click();
    const diff = page.getByTestId('config-diff');
    await expect.poll(() => diff.textContent()).toContain('intervalMs');
    expect(await diff.textContent()).toContain('600000');
    await checkPage(page, 'config');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain('Saved 1 change(s) to heartbeat');
    expect(((await ui.rpc.call('config.read', { section: 'heartbeat' })) as Json).intervalMs).toBe(600000);
    const after = (await ui.rpc.call('config.history', { limit: 50 })) as { entries: Array<{ sha: string }> };
    expect(after.entries.length).toBe(before.entries.length + 1);
    const newest = after.entries[0]!;
    const previous = before.entries[0]!;
    expect(after.entries[1]?.sha).toBe(previous.sha);
    const { diff: committed } = (await ui.rpc.call('config.diff', { sha: previous.sha })) as { diff: string };
    expect(committed).toContain('+  intervalMs: 600000');
    // The page's history shows the new commit, and the previous one's diff to now on request.
    const history = page.getByTestId('config-history');
    await expect.poll(() => history.textContent()).toContain(newest.sha.slice(0, 8));
    await history.getByRole('button', { name: 'Diff to now' }).nth(1).click();
    await expect.poll(() => page.getByText(/\+\s+intervalMs: 600000/).count()).toBeGreaterThan(0);
    // Roll back to the commit before the edit (the page asks first).
    page.once('dialog', (dialog) => void dialog.accept());
    await history.getByRole('button', { name: 'Roll back' }).first().click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toContain(`Rolled back to ${previous.sha.slice(0, 8)}`);
    expect(((await ui.rpc.call('config.read', { section: 'heartbeat' })) as Json).intervalMs).toBe(1800000);
    await expect.poll(() => page.getByLabel('intervalMs').inputValue()).toBe('1800000');
    expect(problems).toEqual([]);
  });
});
