import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { seriesValue } from '@agentd/test-support';
import { ADMIN_TOKEN, daemonPool, eventually, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-metrics-');
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await pool.cleanup();
});

/** CI installs Prometheus (tooling/scripts/system-deps.sh): there a missing binary fails the test. */
const hasPrometheus = spawnSync('prometheus', ['--version']).status === 0 || process.env.CI === 'true';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const scrape = (url: string, token?: string) =>
  fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('GET /metrics', () => {
  it('answers an admin token with calls, turns and sockets; refuses no token and an rpc token', async () => {
    const daemon = await pool.start(pool.tempDir());
    const admin = rpcClient(daemon.url);
    const { token: rpcToken } = await admin.call<{ token: string }>('tokens.create', { scopes: ['rpc'] });
    expect((await scrape(daemon.url)).status).toBe(401);
    expect((await scrape(daemon.url, rpcToken)).status).toBe(403);
    await admin.call('system.ping');
    await admin.call('system.ping');
    expect((await admin.fail('agent.execute', { message: 42 })).code).toBe(-32602);
    await admin.call('agent.execute', { message: '/tool nope {}' });
    const socket = new WebSocket(daemon.wsUrl, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    await new Promise((resolve) => socket.once('open', resolve));
    try {
      const response = await scrape(daemon.url, ADMIN_TOKEN);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/plain');
      const text = await response.text();
      expect(seriesValue(text, 'agentd_rpc_requests_total{method="system.ping",code="0"}')).toBe(2);
      expect(seriesValue(text, 'agentd_rpc_requests_total{method="agent.execute",code="-32602"}')).toBe(1);
      expect(
        seriesValue(
          text,
          'agentd_agent_turns_total{agent="default",end_reason="completed_with_tool_errors"}',
        ),
      ).toBe(1);
      // The default agent holds no tools: the call the offline model made was refused.
      expect(seriesValue(text, 'agentd_tool_calls_total{tool="nope",outcome="error"}')).toBe(1);
      expect(
        seriesValue(text, 'agentd_provider_tokens_total{provider="offline",kind="input"}'),
      ).toBeGreaterThan(0);
      expect(seriesValue(text, 'agentd_websocket_connections')).toBe(1);
      expect(seriesValue(text, 'agentd_delivery_queue_depth{stage="queued"}')).toBe(0);
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      // No session key or token reaches a label.
      expect(text).not.toContain('default:rpc');
      expect(text).not.toContain(ADMIN_TOKEN);
    } finally {
      socket.close();
    }
  });

  it('serves metrics.listen without a token, and nothing else there', async () => {
    const port = await freePort();
    const daemon = await pool.start(pool.tempDir(), { config: { metrics: { listen: `127.0.0.1:${port}` } } });
    await rpcClient(daemon.url).call('system.ping');
    const response = await scrape(`http://127.0.0.1:${port}`);
    expect(response.status).toBe(200);
    expect(
      seriesValue(await response.text(), 'agentd_rpc_requests_total{method="system.ping",code="0"}'),
    ).toBe(1);
    expect((await fetch(`http://127.0.0.1:${port}/rpc`)).status).toBe(404);
  });

  it('is not served when metrics.enabled is false', async () => {
    const daemon = await pool.start(pool.tempDir(), { config: { metrics: { enabled: false } } });
    expect((await scrape(daemon.url, ADMIN_TOKEN)).status).toBe(404);
  });

  it.runIf(hasPrometheus)(
    'is scraped by a real Prometheus server',
    async () => {
      const dir = pool.tempDir();
      const metricsPort = await freePort();
      const daemon = await pool.start(pool.tempDir(), {
        config: { metrics: { listen: `127.0.0.1:${metricsPort}` } },
      });
      await rpcClient(daemon.url).call('system.ping');
      const config = join(dir, 'prometheus.yml');
      writeFileSync(
        config,
        [
          'global:',
          '  scrape_interval: 1s',
          'scrape_configs:',
          '  - job_name: agentd',
          '    static_configs:',
          `      - targets: ['127.0.0.1:${metricsPort}']`,
          '',
        ].join('\n'),
      );
      const webPort = await freePort();
      const prometheus = spawn(
        'prometheus',
        [
          `--config.file=${config}`,
          `--storage.tsdb.path=${join(dir, 'tsdb')}`,
          `--web.listen-address=127.0.0.1:${webPort}`,
        ],
        { stdio: 'ignore' },
      );
      children.push(prometheus);
      const api = `http://127.0.0.1:${webPort}/api/v1`;
      const target = await eventually(async () => {
        const answer = await fetch(`${api}/targets`)
          .then((r) => r.json())
          .catch(() => undefined);
        const active = (answer as { data?: { activeTargets?: Array<{ health: string; lastError: string }> } })
          ?.data?.activeTargets?.[0];
        return active?.health === 'up' ? active : undefined;
      }, 30_000);
      expect(target.lastError).toBe('');
      const query = encodeURIComponent('agentd_rpc_requests_total{method="system.ping"}');
      const value = await eventually(async () => {
        const answer = (await (await fetch(`${api}/query?query=${query}`)).json()) as {
          data: { result: Array<{ value: [number, string] }> };
        };
        return answer.data.result[0]?.value[1];
      }, 15_000);
      expect(Number(value)).toBeGreaterThanOrEqual(1);
    },
    60_000,
  );
});
