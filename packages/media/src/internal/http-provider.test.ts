import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMediaError } from '../errors.js';
import { bodyOf, jsonOf, postProvider } from './http-provider.js';

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/v1/declared') {
      // Declares 10 MiB and sends a little: refused from the header, before reading.
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.write(Buffer.alloc(1000));
      return;
    }
    if (req.url === '/v1/streamed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let chunk = 0; chunk < 64; chunk += 1) res.write(Buffer.alloc(16 * 1024, 0x20));
      res.end('{}');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end('{"__proto__":{"polluted":true},"text":"ok"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('provider answers', () => {
  const provider = () => ({ id: 'fake', baseUrl });
  const post = (path: string) => postProvider(provider(), path, '{}', { timeoutMs: 5000, json: true });

  it('refuses bodies over the cap, declared or streamed, without holding them', async () => {
    for (const path of ['/declared', '/streamed'])
      await expect(bodyOf(provider(), await post(path), 64 * 1024)).rejects.toSatisfy(
        (error) =>
          isMediaError(error, 'PROVIDER_FAILED') &&
          error.data?.maxBytes === 64 * 1024 &&
          error.data?.errorKind === 'network',
      );
    expect((await bodyOf(provider(), await post('/streamed'))).length).toBe(64 * 16 * 1024 + 2);
  });

  it('reads JSON with a __proto__ key as data, not as a prototype', async () => {
    const answer = await jsonOf(provider(), await post('/json'));
    expect(answer.text).toBe('ok');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(answer)).toBe(Object.prototype);
  });
});
