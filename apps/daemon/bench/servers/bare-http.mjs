// Baseline: a bare node:http server that reads the body, parses it and answers JSON.
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const request = JSON.parse(Buffer.concat(chunks).toString());
    const body = JSON.stringify({ jsonrpc: '2.0', result: { pong: true, ts: Date.now() }, id: request.id });
    res
      .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
      .end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));
