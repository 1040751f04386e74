import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDaemonServer, type Gateway, startGate } from './gateway.js';
import type { GatewayPool } from './gateway-pool.js';

/** A gateway whose POST /rpc answers `rpc ok`; the server's gate is what is under test. */
function answeringGateway(): GatewayPool<Gateway> {
  return {
    http: async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('rpc ok');
    },
  } as GatewayPool<Gateway>;
}

const hooks = { matches: () => false, handle: async () => {} };
const servers: Array<ReturnType<typeof createDaemonServer>> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(readiness: ReturnType<typeof startGate>): Promise<string> {
  const server = createDaemonServer({ gateway: answeringGateway(), hooks, readiness });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('createDaemonServer', () => {
  it('answers /health 503 while starting and holds other requests until the start completes', async () => {
    const gate = startGate();
    const url = await serve(gate);
    const starting = await fetch(`${url}/health`);
    expect(starting.status).toBe(503);
    expect(await starting.json()).toEqual({ ok: false, status: 'starting' });

    let answered = false;
    const call = fetch(`${url}/rpc`, { method: 'POST', body: '{}' }).then(async (response) => {
      answered = true;
      return { status: response.status, text: await response.text() };
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered).toBe(false);

    gate.open();
    expect(await call).toEqual({ status: 200, text: 'rpc ok' });
    const ready = await fetch(`${url}/health`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true });
  });

  it('drops the waiting requests when the start fails', async () => {
    const gate = startGate();
    const url = await serve(gate);
    const call = fetch(`${url}/rpc`, { method: 'POST', body: '{}' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    gate.fail();
    await expect(call).rejects.toThrow();
  });
});
