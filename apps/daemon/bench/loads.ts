/**
 * The loads of the memory-under-load benchmark (issue #23): each drives a running daemon and
 * returns when every client it made has left, so the caller can read RSS before, at the peak
 * and after.
 */
import WebSocket from 'ws';

/** Where the load goes. `sampleRss` is called now and then; the caller keeps the peak. */
export interface LoadTarget {
  port: number;
  token: string;
  sampleRss: () => void;
}

/** One JSON-RPC call over POST /rpc; the answer is read and dropped. */
async function post(target: LoadTarget, id: number, method: string, params: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${target.port}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  await response.text();
}

/** Opens `count` authenticated WebSockets, `parallel` at a time. */
async function openSockets(target: LoadTarget, count: number, parallel = 50): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  let next = 0;
  const opener = async () => {
    for (let n = next++; n < count; n = next++) {
      const ws = new WebSocket(`ws://127.0.0.1:${target.port}/ws`, {
        headers: { authorization: `Bearer ${target.token}` },
        perMessageDeflate: false,
      });
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      sockets.push(ws);
    }
  };
  await Promise.all(Array.from({ length: parallel }, opener));
  return sockets;
}

/** Sends one call on a socket and waits for its answer (notifications are skipped). */
function callOn(ws: WebSocket, id: number, method: string, params: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: WebSocket.RawData) => {
      if ((JSON.parse(data.toString()) as { id?: unknown }).id !== id) return;
      ws.off('message', onMessage);
      resolve();
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }), (error) => error && reject(error));
  });
}

/**
 * One call of each method the loads make, over HTTP and over a WebSocket, before RSS is read:
 * what a daemon loads once on first use (usearch with the first stored vector, a method's
 * first-call state) is start-up, not growth under load, and the figure after is about what
 * the load's volume leaves behind.
 */
export async function warmUp(target: LoadTarget): Promise<void> {
  const calls: [string, unknown][] = [
    ['system.ping', {}],
    ['agent.execute', { message: 'warm-up turn', sessionKey: 'warmup:chat:user' }],
    ['memory.store', { content: 'warm-up fact: the build passed', sessionKey: 'warmup:chat:user' }],
    ['memory.search', { query: 'build', limit: 5 }],
    ['session.list', { limit: 20 }],
    ['session.history', { key: 'warmup:chat:user', limit: 20 }],
  ];
  const [ws] = await openSockets(target, 1, 1);
  let id = 0;
  for (const [method, params] of calls) {
    await post(target, id++, method, params);
    await callOn(ws!, id++, method, params);
  }
  ws!.terminate();
}

/** `sessions` one-turn sessions with 2 KB messages through POST /rpc, 50 at a time. */
export async function sessionLoad(target: LoadTarget, sessions: number): Promise<void> {
  const message = 'm'.repeat(2048);
  let next = 0;
  const worker = async () => {
    for (let n = next++; n < sessions; n = next++) {
      await post(target, n, 'agent.execute', { message, sessionKey: `load:chat:user${n}` });
      if (n % 1000 === 0) target.sampleRss();
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
}

/**
 * `ms` of mixed traffic from 100 WebSocket and 20 HTTP clients: pings, turns in 500 sessions,
 * memory writes and recalls, session lists and histories; then every client leaves.
 */
export async function mixedLoad(target: LoadTarget, ms: number): Promise<void> {
  const sockets = await openSockets(target, 100);
  const until = Date.now() + ms;
  let id = 0;
  const step = (n: number): [string, unknown] => {
    const session = `mixed:chat:user${n % 500}`;
    switch (n % 6) {
      case 0:
        return ['system.ping', {}];
      case 1:
        return ['agent.execute', { message: `question ${n} ${'q'.repeat(512)}`, sessionKey: session }];
      case 2:
        return [
          'memory.store',
          { content: `fact ${n}: the build of project ${n % 97} passed`, sessionKey: session },
        ];
      case 3:
        return ['memory.search', { query: `project ${n % 97} build`, limit: 5 }];
      case 4:
        return ['session.list', { limit: 20 }];
      default:
        return ['session.history', { key: session, limit: 20 }];
    }
  };
  const wsClient = async (ws: WebSocket) => {
    while (Date.now() < until) {
      const n = id++;
      await callOn(ws, n, ...step(n));
    }
  };
  const httpClient = async () => {
    while (Date.now() < until) {
      const n = id++;
      await post(target, n, ...step(n));
      if (n % 500 === 0) target.sampleRss();
    }
  };
  await Promise.all([...sockets.map(wsClient), ...Array.from({ length: 20 }, httpClient)]);
  target.sampleRss();
  for (const ws of sockets) ws.terminate();
}

/** One burst: 200 sockets connect at once, each runs 20 turns in its own session, then all drop. */
export async function burstLoad(target: LoadTarget, cycle: number): Promise<void> {
  const sockets = await openSockets(target, 200, 200);
  await Promise.all(
    sockets.map(async (ws, socket) => {
      for (let turn = 0; turn < 20; turn++) {
        await callOn(ws, turn, 'agent.execute', {
          message: `burst ${cycle} turn ${turn} ${'b'.repeat(1024)}`,
          sessionKey: `burst:chat:c${cycle}s${socket}`,
        });
      }
    }),
  );
  target.sampleRss();
  for (const ws of sockets) ws.terminate();
}
