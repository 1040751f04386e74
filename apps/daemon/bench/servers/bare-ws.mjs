// Baseline: a bare `ws` server that parses each message and echoes a JSON-RPC-shaped answer
// (`--batch`: its answers batched per tick as the daemon's are).
import { WebSocketServer } from 'ws';
import { sendAnswer } from './tick-batching.mjs';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('connection', (socket) => {
  socket.on('message', (data) => {
    const request = JSON.parse(String(data));
    sendAnswer(
      socket,
      JSON.stringify({ jsonrpc: '2.0', result: { pong: true, ts: Date.now() }, id: request.id }),
    );
  });
});
process.on('SIGINT', () => process.exit(0));
wss.on('listening', () => process.stdout.write(`PORT ${wss.address().port}\n`));
