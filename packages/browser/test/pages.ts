import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BrowserError } from '../src/errors.js';

/** A local web server for the browser tests, counting the requests it saw. */
export interface TestSite {
  origin: string;
  port: number;
  /** Request paths in arrival order. */
  hits: string[];
  close(): Promise<void>;
}

const html = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const pages: Record<string, string> = {
  '/form': html(
    'Form',
    `<h1>Sign up</h1>
     <form method="post" action="/submit">
       <label>Name <input name="name"></label>
       <label>Color <select name="color"><option value="red">Red</option><option value="green">Green</option><option value="blue">Blue</option></select></label>
       <label><input type="checkbox" name="subscribe"> Subscribe</label>
       <button type="submit">Send</button>
     </form>`,
  ),
  '/interactive': html(
    'Interactive',
    `<p id="status">idle</p>
     <button onmouseenter="document.getElementById('status').textContent='hovered'">Hover me</button>
     <label>Search <input id="q" onkeydown="if(event.key==='Enter')document.getElementById('status').textContent='searched:'+this.value"></label>
     <button onclick="setTimeout(()=>{const p=document.createElement('p');p.textContent='Appeared later';document.body.append(p)},300)">Later</button>
     <a href="/popup" target="_blank">Popup</a>
     <div style="height:5000px">tall</div>
     <p>Bottom</p>`,
  ),
  '/popup': html('Popup', '<p>popped</p>'),
  '/tall': html('Tall', '<div style="height:3000px;background:linear-gradient(red,blue)">tall</div>'),
  '/console': html(
    'Console',
    `<script>
       for (let i = 0; i < 25; i++) console.info('line ' + i);
       console.log('hello');
       console.warn('careful');
       console.error('bad');
       setTimeout(() => { throw new Error('boom'); }, 0);
     </script>`,
  ),
  '/many': html('Many', Array.from({ length: 300 }, (_, i) => `<button>b${i}</button>`).join('')),
};

/** Serves the test pages; `extra` adds or overrides routes. */
export async function startSite(
  extra: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {},
): Promise<TestSite> {
  const hits: string[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0] as string;
    hits.push(path);
    const handler = extra[path];
    if (handler) return handler(req, res);
    if (path === '/favicon.ico') {
      // Otherwise every page adds a 404 line to the console capture.
      res.writeHead(204).end();
      return;
    }
    if (path === '/redirect') {
      res.writeHead(302, { location: '/form' }).end();
      return;
    }
    if (path === '/hang') {
      // Headers and the start of a document, then nothing: the load event never comes.
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<!doctype html><html><head><title>Hang</title></head><body><p>loading');
      return;
    }
    if (path === '/submit' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            html(
              'Done',
              `<p>Thanks ${form.get('name')}, color ${form.get('color')}, subscribe ${form.get('subscribe') ?? 'off'}</p>`,
            ),
          );
      });
      return;
    }
    const page = pages[path];
    if (page === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Width and height of a PNG, read from its IHDR chunk. */
export function pngSize(base64: string): { width: number; height: number } {
  const bytes = Buffer.from(base64, 'base64');
  expectPng(bytes);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function expectPng(bytes: Buffer): void {
  if (!bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    throw new Error('not a PNG');
  }
}

/** Awaits a call that must fail with a {@link BrowserError} and returns that error; any other outcome throws. */
export async function rejection(promise: Promise<unknown>): Promise<BrowserError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BrowserError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}
