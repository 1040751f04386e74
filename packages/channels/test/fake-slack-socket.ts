import type { Server } from 'node:http';
import { type WebSocket, WebSocketServer } from 'ws';

/** An envelope the fake sent and whether the client acknowledged it. */
export interface SocketEnvelope {
  envelope_id: string;
  type: string;
  payload: Record<string, unknown>;
  acked: boolean;
}

/** Slack's Socket Mode server side: single-use connection URLs, `hello`, envelopes, acks, `disconnect`. */
export interface FakeSocketMode {
  /** What `apps.connections.open` answers: a fresh, single-use `wss` (here `ws`) URL. */
  open(): { url: string };
  /** Sends an `events_api` envelope carrying `event` to every open connection. */
  pushEvent(event: Record<string, unknown>): string;
  envelopes: SocketEnvelope[];
  /** Open connections that received `hello`. */
  connections(): number;
  /** URLs handed out by `open`. */
  opened(): number;
  /** Sends `{type: 'disconnect', reason}` as Slack does before recycling a connection. */
  disconnect(reason?: string): void;
  close(): Promise<void>;
}

/** Serves Socket Mode WebSockets under `/link` on `server`. */
export function startFakeSocketMode(server: Server, baseUrl: string): FakeSocketMode {
  const tickets = new Set<string>();
  const envelopes: SocketEnvelope[] = [];
  const open = new Set<WebSocket>();
  let counter = 0;
  let opened = 0;
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', baseUrl);
    const ticket = url.searchParams.get('ticket') ?? '';
    // As Slack does: a URL from apps.connections.open connects once.
    if (url.pathname !== '/link' || !tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      open.add(ws);
      ws.on('close', () => open.delete(ws));
      ws.on('message', (raw) => {
        const ack = JSON.parse(String(raw)) as { envelope_id?: string };
        const found = envelopes.find((item) => item.envelope_id === ack.envelope_id);
        if (found) found.acked = true;
      });
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: open.size,
          debug_info: { host: 'fake-socket-mode', approximate_connection_time: 18060 },
          connection_info: { app_id: 'A0FAKE' },
        }),
      );
    });
  });
  return {
    open() {
      const ticket = `t${++counter}`;
      tickets.add(ticket);
      opened += 1;
      return { url: `${baseUrl.replace(/^http/, 'ws')}/link?ticket=${ticket}` };
    },
    pushEvent(event) {
      const envelope: SocketEnvelope = {
        envelope_id: `env-${++counter}`,
        type: 'events_api',
        payload: {
          token: 'legacy-verification-token',
          team_id: 'T0FAKE',
          api_app_id: 'A0FAKE',
          type: 'event_callback',
          event_id: `Ev${counter}`,
          event_time: Math.floor(Date.now() / 1000),
          event,
        },
        acked: false,
      };
      envelopes.push(envelope);
      const frame = JSON.stringify({
        envelope_id: envelope.envelope_id,
        type: envelope.type,
        payload: envelope.payload,
        accepts_response_payload: false,
        retry_attempt: 0,
        retry_reason: '',
      });
      for (const ws of open) ws.send(frame);
      return envelope.envelope_id;
    },
    envelopes,
    connections: () => open.size,
    opened: () => opened,
    disconnect(reason = 'refresh_requested') {
      for (const ws of open)
        ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake-socket-mode' } }));
    },
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      for (const ws of open) ws.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}
