import { createHttpClient } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { ADMIN_TOKEN, daemonPool } from './helpers.js';

const pool = daemonPool('agentd-posture-');
afterEach(() => pool.cleanup());

/** A local OpenAI-compatible server that serves `tiny` with a 4,096-token window (vLLM's field). */
async function startModelServer(): Promise<string> {
  const modelServer = await listenLocal((req, res) => {
    if (req.url === '/v1/models') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ object: 'list', data: [{ id: 'tiny', object: 'model', max_model_len: 4096 }] }),
        );
      return;
    }
    res.writeHead(404).end();
  });
  return `${pool.closeAfter(modelServer).url}/v1`;
}

type Finding = { code: string; count: number };

describe('config posture', () => {
  it('records the served-window posture at start and again when the providers change', async () => {
    const baseUrl = await startModelServer();
    const daemon = await pool.start(pool.tempDir(), {
      config: { providers: { entries: { local: { type: 'openai-compatible', baseUrl, models: ['tiny'] } } } },
    });
    const client = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN });
    const postureRows = async () =>
      (
        (await client.call('obs.diagnostics', { category: 'config_posture' })) as {
          events: Array<{ data: Record<string, unknown> }>;
        }
      ).events;
    const waitForRows = async (n: number) => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const rows = await postureRows();
        if (rows.length >= n) return rows;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`fewer than ${n} config_posture rows`);
    };

    const [first] = await waitForRows(1);
    expect(first?.data).toMatchObject({
      servedBelowConfigured: 1,
      providersProbed: 1,
      below: { local: ['tiny'] },
    });
    const fleet = (await client.call('obs.fleet.health', {})) as { findings: Finding[] };
    expect(fleet.findings).toContainEqual(
      expect.objectContaining({ code: 'config_posture:served_below_configured', count: 1 }),
    );

    // The operator aligns the configured window with what the server serves: the latest row is clean.
    await client.call('config.patch', { providers: { entries: { local: { contextWindow: 4096 } } } });
    const rows = await waitForRows(2);
    expect(rows[0]?.data).toMatchObject({ servedBelowConfigured: 0, providersProbed: 1 });
    const after = (await client.call('obs.fleet.health', {})) as { findings: Finding[] };
    expect(after.findings.map((finding) => finding.code)).not.toContain(
      'config_posture:served_below_configured',
    );
  });
});
