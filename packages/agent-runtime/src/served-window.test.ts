import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { providersSectionSchema } from './config.js';
import { checkServedWindows, isLocalEndpoint, probeServedWindows } from './served-window.js';

const servers: Server[] = [];

/** A local model server answering `GET /v1/models` with `body` (status `status`). */
async function modelServer(body: unknown, status = 200): Promise<{ baseUrl: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, paths };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('probeServedWindows', () => {
  it('reads the served window of each model the server lists', async () => {
    const { baseUrl, paths } = await modelServer({
      object: 'list',
      data: [
        { id: 'qwen-7b', object: 'model', max_model_len: 8192 },
        { id: 'router-model', context_length: 32768 },
        { id: 'studio-model', max_context_length: 4096 },
        { id: 'llama-gguf', meta: { n_ctx_train: 131072 } },
        { id: 'bad', max_model_len: -1 },
      ],
    });
    const served = await probeServedWindows({ baseUrl: `${baseUrl}/` });
    expect(paths).toEqual(['GET /v1/models']);
    expect(served).toEqual(
      new Map([
        ['qwen-7b', 8192],
        ['router-model', 32768],
        ['studio-model', 4096],
      ]),
    );
  });

  it('answers undefined for an error status, a body that is no model list, or a closed port', async () => {
    expect(await probeServedWindows({ baseUrl: (await modelServer({ error: 'no' }, 500)).baseUrl })).toBe(
      undefined,
    );
    expect(await probeServedWindows({ baseUrl: (await modelServer({ models: [] })).baseUrl })).toBe(
      undefined,
    );
    const closed = await modelServer({ data: [] });
    await new Promise((resolve) => servers.pop()?.close(resolve));
    expect(await probeServedWindows({ baseUrl: closed.baseUrl })).toBe(undefined);
  });
});

describe('isLocalEndpoint', () => {
  it('tells local and private-network endpoints from hosted ones', () => {
    const local = [
      'http://127.0.0.1:11434/v1',
      'http://localhost:8000/v1',
      'http://[::1]:8000/v1',
      'http://10.1.2.3/v1',
      'http://172.20.0.5/v1',
      'http://192.168.1.10:1234/v1',
      'http://gpu-box.local/v1',
      // Forms a hand-written classifier misses: IPv4-mapped private, carrier-grade NAT, the
      // whole of fe80::/10, and 0.0.0.0 (the local host on Linux).
      'http://[::ffff:10.0.0.5]:8000/v1',
      'http://[::ffff:192.168.1.2]/v1',
      'http://100.64.1.2:8000/v1',
      'http://100.127.255.1/v1',
      'http://[fe90::1]/v1',
      'http://[febf::1]:8000/v1',
      'http://0.0.0.0:8000/v1',
    ];
    const hosted = [
      'https://api.openai.com/v1',
      'http://172.32.0.1/v1',
      'http://8.8.8.8/v1',
      'http://100.128.0.1/v1',
      'http://[::ffff:8.8.8.8]/v1',
      'http://[2606:4700::1111]/v1',
      'https://example.com/v1',
      'not a url',
    ];
    expect(local.filter(isLocalEndpoint)).toEqual(local);
    expect(hosted.filter(isLocalEndpoint)).toEqual([]);
  });
});

describe('checkServedWindows', () => {
  it('counts local providers serving a configured model below its configured window', async () => {
    const small = await modelServer({ data: [{ id: 'qwen-7b', max_model_len: 8192 }] });
    const enough = await modelServer({ data: [{ id: 'big', max_model_len: 131072 }] });
    const down = await modelServer({}, 503);
    const providers = providersSectionSchema.parse({
      entries: {
        vllm: { type: 'openai-compatible', baseUrl: small.baseUrl, models: ['qwen-7b', 'unlisted'] },
        roomy: {
          type: 'openai-compatible',
          baseUrl: enough.baseUrl,
          models: [{ id: 'big', contextWindow: 65536 }],
        },
        broken: { type: 'openai-compatible', baseUrl: down.baseUrl, models: ['x'] },
        hosted: { type: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', models: ['gpt'] },
        offline: { type: 'offline' },
      },
    });
    const posture = await checkServedWindows(providers);
    expect(posture).toEqual({
      servedBelowConfigured: 1,
      providersProbed: 2,
      providersUnreachable: 1,
      below: { vllm: ['qwen-7b'] },
    });
  });
});
