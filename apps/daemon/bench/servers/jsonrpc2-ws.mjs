// Comparison: the `json-rpc-2.0` npm library serving system.ping over `ws` (`--batch`: its
// answers batched per tick as the daemon's are).
import { JSONRPCServer } from 'json-rpc-2.0';
import { WebSocketServer } from 'ws';
import { sendAnswer } from './tick-batching.mjs';

const server = new JSONRPCServer();
server.addMethod('system.ping', () => ({ pong: true, ts: Date.now() }));
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('connection', (socket) => {
  socket.on('message', async (data) => {
    const response = await server.receive(JSON.parse(String(data)));
    if (response) sendAnswer(socket, JSON.stringify(response));
  });
});
wss.on('listening', () => process.stdout.write(`PORT ${wss.address().port}\n`));
