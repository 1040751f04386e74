import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcCoreError } from './errors.js';
import { closeServer } from './internal/test-support.js';
import { createSseWriter, type SseWriter, type SseWriterOptions } from './sse-writer.js';

let server: Server | undefined;

afterEach(async () => {
  if (server) await closeServer(server);
  server = undefined;
});

async function start(options: SseWriterOptions, script: (writer: SseWriter) => void) {
  let writer: SseWriter | undefined;
  server = createServer((_request, response) => {
    writer = createSseWriter(response, options);
    script(writer);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat/stream`;
  const response = await new Promise<IncomingMessage>((resolve) => get(url, resolve));
  return { response, writer: () => writer! };
}

function readAll(response: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      text += chunk;
    });
    response.on('end', () => resolve(text));
  });
}

describe('createSseWriter', () => {
  it('streams JSON events with names and ids over a real HTTP response', async () => {
    const { response } = await start({ heartbeatMs: 0, retryMs: 2000 }, (writer) => {
      writer.send({ event: 'delta', data: { text: 'line one\nline two' }, id: 1 });
      writer.send({ data: 'plain' });
      writer.comment('keep\nalive');
      writer.close();
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache, no-transform');
    expect(await readAll(response)).toBe(
      'retry: 2000\n\n' +
        'event: delta\nid: 1\ndata: {"text":"line one\\nline two"}\n\n' +
        'data: "plain"\n\n' +
        ': keep\n: alive\n\n',
    );
  });

  it('sends heartbeat comments at the configured interval', async () => {
    const { response, writer } = await start({ heartbeatMs: 20 }, () => {});
    const text = await new Promise<string>((resolve) => {
      let seen = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        seen += chunk;
        if (seen.split(': heartbeat\n\n').length > 2) resolve(seen);
      });
    });
    expect(text.startsWith(': heartbeat\n\n: heartbeat\n\n')).toBe(true);
    writer().close();
  });

  it('reports closed and notifies listeners when the client goes away', async () => {
    const { response, writer } = await start({ heartbeatMs: 0 }, () => {});
    const closed = new Promise<void>((resolve) => writer().onClose(resolve));
    response.destroy();
    await closed;
    expect(writer().closed).toBe(true);
    expect(writer().send({ data: 1 })).toBe(false);
    let lateCalled = false;
    writer().onClose(() => {
      lateCalled = true;
    });
    expect(lateCalled).toBe(true);
  });

  it('rejects an event name or id containing a line break', async () => {
    const { writer, response } = await start({ heartbeatMs: 0 }, () => {});
    expect(() => writer().send({ event: 'a\nb', data: 1 })).toThrow(RpcCoreError);
    expect(() => writer().send({ id: 'x\r', data: 1 })).toThrow(/line break/);
    writer().close();
    expect(await readAll(response)).toBe('');
  });

  it('ends the stream of a client that stops reading, instead of buffering without bound', async () => {
    const options = { heartbeatMs: 0, maxBufferedBytes: 1_048_576, slowClientTimeoutMs: 200 };
    const { response, writer } = await start(options, () => {});
    response.pause();
    const closed = new Promise<void>((resolve) => writer().onClose(resolve));
    const event = { event: 'delta', data: { text: 'z'.repeat(64 * 1024) } };
    // 20 MB: more than the kernel's socket buffers take before bytes wait in the process.
    for (let i = 0; i < 320; i++) writer().send(event);
    await closed;
    expect(writer().overflowed).toBe(true);
    expect(writer().closed).toBe(true);
    expect(writer().send(event)).toBe(false);
  });

  it('keeps streaming to a client that reads, even through a burst over the cap', async () => {
    const options = { heartbeatMs: 0, maxBufferedBytes: 65_536, slowClientTimeoutMs: 2_000 };
    const { response, writer } = await start(options, (stream) => {
      for (let i = 0; i < 40; i++) stream.send({ data: { n: i, text: 'w'.repeat(16 * 1024) } });
      setTimeout(() => stream.close(), 50);
    });
    const text = await readAll(response);
    expect(writer().overflowed).toBe(false);
    expect(text.match(/^data: /gm)).toHaveLength(40);
  });
});
