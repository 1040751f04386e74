import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBoundedBody } from './body.js';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Serves on port 0; each request's read result is answered as JSON (a refused body is drained). */
async function serve(maxBytes: number): Promise<number> {
  server = createServer(async (request, response) => {
    const body = await readBoundedBody(request, maxBytes);
    if (!body.ok) request.resume();
    response.setHeader('content-type', 'application/json');
    // JSON has no undefined: a refusal without a declared size travels as null.
    response.end(JSON.stringify(body.ok ? body : { ok: false, declaredBytes: body.declaredBytes ?? null }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Posts `chunks` (chunked when `length` is undefined) and parses the answer. */
async function post(port: number, chunks: string[], length?: number): Promise<unknown> {
  const request = httpRequest({
    port,
    host: '127.0.0.1',
    method: 'POST',
    headers: length === undefined ? {} : { 'content-length': String(length) },
  });
  for (const chunk of chunks) request.write(chunk);
  request.end();
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of response) text += String(chunk);
  return JSON.parse(text);
}

describe('readBoundedBody', () => {
  it('answers the text of a body within the limit, declared or chunked', async () => {
    const port = await serve(10);
    expect(await post(port, ['héllo'], Buffer.byteLength('héllo'))).toEqual({ ok: true, text: 'héllo' });
    expect(await post(port, ['12345', '67890'])).toEqual({ ok: true, text: '1234567890' });
  });

  it('refuses a declared content-length over the limit, naming it', async () => {
    const port = await serve(10);
    expect(await post(port, ['x'.repeat(11)], 11)).toEqual({ ok: false, declaredBytes: 11 });
  });

  it('refuses a chunked body once it streams past the limit, with no declared size', async () => {
    const port = await serve(10);
    expect(await post(port, ['123456', '789012'])).toEqual({ ok: false, declaredBytes: null });
  });
});
