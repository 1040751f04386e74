import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder, createOpenAiEmbedder, createTransformersEmbedder } from './embedder.js';
import { createHttpReranker } from './reranker.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

interface Seen {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

/** A local server speaking the OpenAI embeddings (and /v1/rerank) wire format. */
async function fakeServer(
  answer: (body: Record<string, unknown>, res: ServerResponse, req: IncomingMessage) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      answer(body, res, req);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

function embeddings(inputs: string[], dimensions: number) {
  return {
    object: 'list',
    model: 'fake',
    data: inputs.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: Array.from({ length: dimensions }, (_, d) => (d === text.length % dimensions ? 3 : 0)),
    })),
  };
}

describe('createHashingEmbedder', () => {
  it('gives the same unit vector for the same text and is honest about being lexical', async () => {
    const embedder = createHashingEmbedder();
    expect(embedder.kind).toBe('lexical');
    expect(embedder.dimensions).toBe(384);
    const [a, b] = await embedder.embed(['The cat sat on the mat', 'The cat sat on the mat']);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    const norm = Math.sqrt(a!.reduce((sum, value) => sum + value * value, 0));
    expect(norm).toBeCloseTo(1, 5);
  });

  it('puts texts sharing words closer than texts sharing none', async () => {
    const embedder = createHashingEmbedder();
    const [query, related, unrelated] = await embedder.embed([
      'running shoes for the marathon',
      'she runs a marathon in new shoes',
      'quarterly tax filing deadline',
    ]);
    const dot = (x: Float32Array, y: Float32Array) =>
      x.reduce((sum, value, index) => sum + value * y[index]!, 0);
    expect(dot(query!, related!)).toBeGreaterThan(dot(query!, unrelated!) + 0.2);
  });

  it('gives every short text a unit vector: greetings, function words only, no words at all', async () => {
    const embedder = createHashingEmbedder();
    const texts = ['hi', 'it is', 'a', '?!', '🙂'];
    const vectors = await embedder.embed(texts);
    for (const vector of vectors) {
      const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
      expect(norm).toBeCloseTo(1, 5);
    }
    // Still told apart: different texts, different vectors.
    expect(Array.from(vectors[1]!)).not.toEqual(Array.from(vectors[2]!));
    expect(Array.from(vectors[3]!)).not.toEqual(Array.from(vectors[4]!));
  });

  it('makes vectors of another length on request, within the lengths it takes', async () => {
    const embedder = createHashingEmbedder();
    const resized = embedder.withDimensions?.(64);
    expect(resized?.dimensions).toBe(64);
    expect(resized?.model).toBe('agentd-hashing-v1-64');
    expect((await resized!.embed(['hello']))[0]).toHaveLength(64);
    expect(embedder.withDimensions?.(8)).toBeUndefined();
  });
});

describe('createOpenAiEmbedder', () => {
  it('posts batches to /v1/embeddings with the bearer key and returns unit vectors in input order', async () => {
    const { url, seen } = await fakeServer((body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const payload = embeddings(body.input as string[], 4);
      payload.data.reverse();
      res.end(JSON.stringify(payload));
    });
    const embedder = createOpenAiEmbedder({
      baseUrl: `${url}/v1`,
      model: 'nomic',
      dimensions: 4,
      apiKey: 'sk-test',
      maxBatch: 2,
    });
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    expect(seen.map((request) => request.path)).toEqual(['/v1/embeddings', '/v1/embeddings']);
    expect(seen[0]).toMatchObject({
      authorization: 'Bearer sk-test',
      body: { model: 'nomic', input: ['a', 'bb'] },
    });
    expect(vectors.map((vector) => Array.from(vector))).toEqual([
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 1],
    ]);
    expect(embedder.model).toBe('openai-compatible:nomic');
  });

  it('fails with DIMENSIONS_MISMATCH when the server answers another length', async () => {
    const { url } = await fakeServer((body, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(embeddings(body.input as string[], 8)));
    });
    const embedder = createOpenAiEmbedder({ baseUrl: url, model: 'm', dimensions: 4 });
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'DIMENSIONS_MISMATCH' });
  });

  it('reports HTTP errors without the key, and auth failures as such', async () => {
    const { url } = await fakeServer((_body, res) => {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"bad key"}');
    });
    const embedder = createOpenAiEmbedder({
      baseUrl: url,
      model: 'm',
      dimensions: 4,
      apiKey: 'sk-secret-value',
    });
    const error = (await embedder.embed(['x']).then(
      () => undefined,
      (caught: unknown) => caught,
    )) as Error & { data: Record<string, unknown> };
    expect(error).toMatchObject({ code: 'EMBEDDER_FAILED', data: { status: 401, reason: 'auth' } });
    expect(JSON.stringify({ message: error.message, data: error.data })).not.toContain('sk-secret-value');
  });

  it('times out a server that never answers', async () => {
    const { url } = await fakeServer(() => undefined);
    const embedder = createOpenAiEmbedder({ baseUrl: url, model: 'm', dimensions: 4, timeoutMs: 50 });
    await expect(embedder.embed(['x'])).rejects.toMatchObject({
      code: 'EMBEDDER_FAILED',
      data: { reason: 'timeout' },
    });
    server?.closeAllConnections();
  });
});

describe('createTransformersEmbedder', () => {
  it('rejects with EMBEDDER_UNAVAILABLE when the optional runtime is not installed', async () => {
    const embedder = createTransformersEmbedder({
      modelPath: '/models/minilm',
      dimensions: 384,
      importRuntime: () => import('@huggingface/transformers-not-installed' as string),
    });
    await expect(embedder.embed(['x'])).rejects.toMatchObject({ code: 'EMBEDDER_UNAVAILABLE' });
  });

  it('loads the model from the configured path only and pools its output', async () => {
    const calls: Array<{ model: string; options: Record<string, unknown> }> = [];
    const runtime = {
      env: { allowRemoteModels: true, allowLocalModels: false, localModelPath: 'x' },
      pipeline: async (_task: string, model: string, options: Record<string, unknown>) => {
        calls.push({ model, options });
        return async (texts: string[]) => ({
          data: Float32Array.from(texts.flatMap((_, index) => [index + 1, 0, 0])),
          dims: [texts.length, 3],
        });
      },
    };
    const embedder = createTransformersEmbedder({
      modelPath: '/models/mini/',
      dimensions: 3,
      importRuntime: async () => runtime,
    });
    const vectors = await embedder.embed(['a', 'b']);
    expect(runtime.env.allowRemoteModels).toBe(false);
    expect(calls).toEqual([{ model: '/models/mini', options: { local_files_only: true } }]);
    expect(vectors.map((vector) => Array.from(vector))).toEqual([
      [1, 0, 0],
      [1, 0, 0],
    ]);
  });
});

describe('createHttpReranker', () => {
  it('posts to /v1/rerank and maps relevance scores back to document order', async () => {
    const { url, seen } = await fakeServer((_body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          results: [
            { index: 1, relevance_score: 0.9 },
            { index: 0, relevance_score: 0.2 },
          ],
        }),
      );
    });
    const reranker = createHttpReranker({ baseUrl: url, model: 'bge-reranker' });
    expect(await reranker.rerank('q', ['d0', 'd1'])).toEqual([0.2, 0.9]);
    expect(seen[0]).toMatchObject({
      path: '/v1/rerank',
      body: { model: 'bge-reranker', query: 'q', documents: ['d0', 'd1'] },
    });
  });

  it('fails with RERANKER_FAILED on an HTTP error', async () => {
    const { url } = await fakeServer((_body, res) => {
      res.writeHead(503).end();
    });
    await expect(createHttpReranker({ baseUrl: url, model: 'm' }).rerank('q', ['d'])).rejects.toMatchObject({
      code: 'RERANKER_FAILED',
    });
  });
});
