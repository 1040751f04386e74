/**
 * webhooks-hmac benchmarks, each beside its baseline in the same run:
 *
 *   npx -y pnpm@10 bench webhooks-hmac      (from the repository root)
 *
 * 1. Signed webhook ingest over HTTP: node:http + createWebhookHandler (read, verify,
 *    parse, match, render templates, no-op callback) against a bare node:http server
 *    that only reads the body. Servers run in child processes so the load generator
 *    and the server each get a core.
 * 2. HMAC verification of a 4 KiB body: createVerifier().verify against a raw
 *    crypto.createHmac(...).update(body).digest('hex') on the same body.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpPostLoad, interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { createVerifier, createWebhookHandler, sign } from '../src/index.js';

const SECRET = 'bench-webhook-secret-0123456789abcdef';
const CONNECTIONS = 16;

// A code-hosting style event of about 1 KiB, the common size of real webhook bodies.
const BODY = JSON.stringify({
  source: 'codehost',
  action: 'opened',
  number: 1347,
  repository: { id: 1296269, full_name: 'acme/rockets', private: false, default_branch: 'main' },
  sender: { login: 'wile', id: 1, type: 'User' },
  pull_request: {
    title: 'Add the launch sequence',
    body: 'x'.repeat(600),
    head: { ref: 'launch', sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e' },
    base: { ref: 'main' },
  },
});

function serve(kind: 'bare' | 'webhooks'): void {
  let handle: Parameters<typeof createServer>[1];
  if (kind === 'bare') {
    handle = (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        Buffer.concat(chunks);
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': 17 })
          .end('{"received":true}');
      });
    };
  } else {
    const handler = createWebhookHandler({
      secret: SECRET,
      mappings: [
        { id: 'other', match: { path: 'other' } },
        {
          id: 'prs',
          match: { path: 'codehost', source: 'codehost' },
          sessionKey: 'hook:codehost:{{payload.pull_request.head.sha}}',
          messageTemplate:
            'Event: {{headers.x-codehost-event}}\nRepository: {{payload.repository.full_name}}\n' +
            'Action: {{payload.action}}\nSender: {{payload.sender.login}}\nTitle: {{pull_request.title}}',
        },
      ],
      onWebhook: () => undefined,
    });
    handle = (req, res) => void handler.node(req, res);
  }
  const server = createServer(handle);
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
  // CPU time is the figure a loaded shared machine distorts least, so the parent asks for it.
  process.on('message', (message) => {
    if (message === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.({ cpuMicros: usage.user + usage.system });
    }
  });
}

interface BenchServer {
  child: ChildProcess;
  port: number;
  /** Server CPU (user + system) consumed while measuring, in microseconds. */
  cpuMicros: number;
  requests: number;
}

function startServer(kind: 'bare' | 'webhooks'): Promise<BenchServer> {
  const child = fork(import.meta.filename, ['serve', kind], { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) =>
      resolve({ child, port: message.port, cpuMicros: 0, requests: 0 }),
    );
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}

function serverCpu(server: BenchServer): Promise<number> {
  return new Promise((resolve) => {
    server.child.once('message', (message: { cpuMicros: number }) => resolve(message.cpuMicros));
    server.child.send('cpu');
  });
}

/** Wraps a load function so the server's CPU per request is accumulated beside the count. */
function withCpu(server: BenchServer, runFor: (ms: number) => Promise<number>) {
  return async (ms: number) => {
    const before = await serverCpu(server);
    const done = await runFor(ms);
    server.cpuMicros += (await serverCpu(server)) - before;
    server.requests += done;
    return done;
  };
}

function httpLoad(port: number, path: string) {
  return httpPostLoad({
    port,
    path,
    body: BODY,
    headers: {
      'content-type': 'application/json',
      'x-webhook-signature': sign({ secret: SECRET, body: BODY }),
      'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'x-codehost-event': 'pull_request',
    },
    connections: CONNECTIONS,
  });
}

function loop(fn: () => void) {
  return async (ms: number) => {
    const until = performance.now() + ms;
    let done = 0;
    while (performance.now() < until) {
      for (let i = 0; i < 1000; i++) fn();
      done += 1000;
    }
    return done;
  };
}

async function main(): Promise<void> {
  const bare = await startServer('bare');
  const webhooks = await startServer('webhooks');
  try {
    const ingest = await interleave(
      [
        {
          name: 'bare node:http (reads the body)',
          runFor: withCpu(bare, httpLoad(bare.port, '/hooks/codehost')),
        },
        {
          name: 'webhooks-hmac handler (signed, mapped)',
          runFor: withCpu(webhooks, httpLoad(webhooks.port, '/hooks/codehost')),
        },
      ],
      { rounds: 5 },
    );
    printComparison(
      `Signed webhook ingest, ${Buffer.byteLength(BODY)} B body, ${CONNECTIONS} keep-alive connections (the aim is on CPU per request, below)`,
      ingest,
    );
    console.log('\nServer CPU per request (user + system; includes warm-up)');
    const bareCpu = bare.cpuMicros / bare.requests;
    const hooksCpu = webhooks.cpuMicros / webhooks.requests;
    printFigure('bare node:http (reads the body)', bareCpu, 'µs');
    printFigure('webhooks-hmac handler (signed, mapped)', hooksCpu, 'µs');
    printFigure('requests per CPU-second, handler / bare', bareCpu / hooksCpu, 'ratio', { above: 0.7 });
  } finally {
    bare.child.kill();
    webhooks.child.kill();
  }

  const body = Buffer.alloc(4096, 'a');
  const verifier = createVerifier({ secret: SECRET });
  const headers = { 'x-webhook-signature': sign({ secret: SECRET, body }) };
  if (!verifier.verify(body, headers).ok) throw new Error('the benchmark signature does not verify');
  const hmac = await interleave([
    {
      name: 'crypto.createHmac sha256 hex (4 KiB)',
      runFor: loop(() => createHmac('sha256', SECRET).update(body).digest('hex')),
    },
    { name: 'createVerifier().verify (4 KiB)', runFor: loop(() => verifier.verify(body, headers)) },
  ]);
  printComparison('HMAC-SHA256 of a 4 KiB body', hmac);
  for (const row of hmac) printFigure(row.name, 1e6 / row.opsPerSec, 'µs per call');
}

if (process.argv[2] === 'serve') serve(process.argv[3] === 'bare' ? 'bare' : 'webhooks');
else await main();
