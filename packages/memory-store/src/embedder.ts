import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MemoryStoreError } from './errors.js';
import { parseOptions } from './internal/inputs.js';
import { words } from './internal/text.js';
import { isFiniteVector, normalise } from './internal/vectors.js';

/**
 * Turns texts into vectors. Implementations return one unit-length vector of
 * `dimensions` numbers per input text, in input order.
 */
export interface Embedder {
  /** Identifies the vector space; cached and stored vectors are keyed by it. */
  readonly model: string;
  /** Length of every vector. */
  readonly dimensions: number;
  /**
   * `lexical` vectors only know which words and word pieces a text holds
   * (paraphrases with other words do not meet); `semantic` vectors come from a
   * trained model.
   */
  readonly kind: 'lexical' | 'semantic';
  /**
   * `false` for an embedder that is cheaper to run than to look up (the hashing embedder: a
   * hash per word, no model, no network): the embedding cache then passes its texts straight
   * through and holds none of its vectors. @default true
   */
  readonly cacheable?: boolean;
  /** Embeds `texts`; rejects with `EMBEDDER_FAILED` or `DIMENSIONS_MISMATCH`. */
  embed(texts: string[], options?: { signal?: AbortSignal | undefined }): Promise<Float32Array[]>;
  /**
   * The same embedder making vectors of another length, or `undefined` when it cannot (a
   * model's vectors have the length it was trained for). Absent: it cannot.
   */
  withDimensions?(dimensions: number): Embedder | undefined;
}

// Frequent English function words carry no topic and, hashed into few
// dimensions, would make every short text look alike.
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his i if in into ' +
    'is it its me my no not of on or our she so than that the their them then there these they this those ' +
    'to us was we were what when where which who will with would you your'
  ).split(' '),
);

function fnv1a(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** @internal Validates {@link HashingEmbedderOptions}. */
export const hashingEmbedderOptionsSchema = z
  .object({
    dimensions: z.number().int().min(16).max(4096).default(384),
  })
  .strict();

/** Options of {@link createHashingEmbedder}. */
export interface HashingEmbedderOptions {
  /**
   * Length of the vectors.
   * @default 384
   */
  dimensions?: number | undefined;
}

/**
 * The built-in local embedder: feature hashing of words, word pairs and
 * character trigrams into a fixed number of signed buckets, with sublinear
 * term weights, then unit length. It needs no weights, no network and no
 * warm-up and always gives the same vector for the same text.
 *
 * It is lexical, not semantic: "car" and "automobile" share nothing, while
 * "running" and "runs" share trigrams. Recall with it is a fuzzy full-text
 * lane; configure a model endpoint for meaning.
 */
export function createHashingEmbedder(options: HashingEmbedderOptions = {}): Embedder {
  const { dimensions } = parseOptions(hashingEmbedderOptionsSchema, options, 'hashing embedder');
  const embedOne = (text: string): Float32Array => {
    const features = new Map<string, number>();
    const add = (feature: string, weight: number) => {
      features.set(feature, (features.get(feature) ?? 0) + weight);
    };
    const all = words(text);
    const topical = all.filter((word) => !STOPWORDS.has(word));
    // A text of function words only ("it is") keeps them, so it still has a direction.
    const tokens = topical.length > 0 ? topical : all;
    for (let index = 0; index < tokens.length; index++) {
      const word = tokens[index]!;
      add(`w:${word}`, 1);
      const next = tokens[index + 1];
      if (next !== undefined) add(`b:${word} ${next}`, 0.5);
      // Trigrams of the padded word let inflections and typos share features.
      const padded = `<${word}>`;
      const chars = Array.from(padded);
      if (chars.length > 3) {
        for (let start = 0; start + 3 <= chars.length; start++) {
          add(`c:${chars.slice(start, start + 3).join('')}`, 0.25);
        }
      }
    }
    // A text without words (punctuation, emoji) is its own one feature rather than the zero vector.
    if (features.size === 0) add(`t:${text.trim()}`, 1);
    const vector = new Float32Array(dimensions);
    for (const [feature, count] of features) {
      const hash = fnv1a(feature, 0);
      const bucket = hash % dimensions;
      // A second hash picks the sign so collisions cancel out on average.
      const sign = fnv1a(feature, 0x9e3779b9) & 1 ? 1 : -1;
      // Sublinear weights keep one repeated word from swamping the rest.
      const weight = count <= 1 ? count : 1 + Math.log(count);
      vector[bucket] = vector[bucket]! + sign * weight;
    }
    return normalise(vector);
  };
  const embedder: Embedder = {
    model: `agentd-hashing-v1-${dimensions}`,
    dimensions,
    kind: 'lexical',
    // Hashing a text's words costs less than the cache's own SHA-256 of it, and each vector the
    // cache kept would hold 4 bytes a dimension for nothing.
    cacheable: false,
    embed: async (texts) => texts.map(embedOne),
    // Any bucket count hashes as well: in the range the options take, a fresh embedder of that size.
    withDimensions: (wanted) =>
      wanted === dimensions
        ? embedder
        : hashingEmbedderOptionsSchema.shape.dimensions.safeParse(wanted).success
          ? createHashingEmbedder({ dimensions: wanted })
          : undefined,
  };
  return embedder;
}

/** @internal Validates {@link OpenAiEmbedderOptions}. */
export const openAiEmbedderOptionsSchema = z
  .object({
    baseUrl: z.string().url(),
    model: z.string().min(1),
    dimensions: z.number().int().min(1).max(65_536),
    apiKey: z.string().min(1).optional(),
    requestDimensions: z.boolean().default(false),
    timeoutMs: z.number().int().min(1).max(600_000).default(30_000),
    maxBatch: z.number().int().min(1).max(2048).default(64),
    kind: z.enum(['lexical', 'semantic']).default('semantic'),
  })
  .strict();

/** Options of {@link createOpenAiEmbedder}. */
export interface OpenAiEmbedderOptions {
  /**
   * Server root or its `/v1` path: `https://api.openai.com/v1`,
   * `http://127.0.0.1:11434/v1` (Ollama), `http://127.0.0.1:8080` (llama.cpp), a vLLM server.
   */
  baseUrl: string;
  /** Model name sent with every request. */
  model: string;
  /** Length the server's vectors have; a different length fails with `DIMENSIONS_MISMATCH`. */
  dimensions: number;
  /** Sent as a bearer token; never logged and never part of an error. */
  apiKey?: string | undefined;
  /**
   * Send `dimensions` in the request (models with shortening, such as OpenAI's text-embedding-3).
   * @default false
   */
  requestDimensions?: boolean | undefined;
  /**
   * Per-request timeout.
   * @default 30000
   */
  timeoutMs?: number | undefined;
  /**
   * Texts per request.
   * @default 64
   */
  maxBatch?: number | undefined;
  /**
   * What the model's vectors capture.
   * @default 'semantic'
   */
  kind?: 'lexical' | 'semantic' | undefined;
  /**
   * The fetch to call.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch | undefined;
}

const embeddingsResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().min(0), embedding: z.array(z.number()) })),
});

function embeddingsUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? `${trimmed}/embeddings` : `${trimmed}/v1/embeddings`;
}

/**
 * An embedder speaking the OpenAI embeddings API (`POST /v1/embeddings`), which
 * OpenAI, Ollama, llama.cpp's server, vLLM and LocalAI all serve. Vectors are
 * normalised to unit length (some servers do not).
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const { fetch: fetchImpl = globalThis.fetch, ...rest } = options;
  const parsed = openAiEmbedderOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    throw new MemoryStoreError(
      'INVALID_OPTIONS',
      `Invalid embeddings endpoint options: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  const settings = parsed.data;
  const url = embeddingsUrl(settings.baseUrl);
  const safeUrl = (() => {
    const parsedUrl = new URL(url);
    parsedUrl.username = '';
    parsedUrl.password = '';
    return parsedUrl.toString();
  })();
  const request = async (texts: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> => {
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (settings.apiKey !== undefined) headers.authorization = `Bearer ${settings.apiKey}`;
    const body: Record<string, unknown> = { model: settings.model, input: texts, encoding_format: 'float' };
    if (settings.requestDimensions) body.dimensions = settings.dimensions;
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: combined,
      });
    } catch (error) {
      const timedOut = timeout.aborted && !(signal?.aborted ?? false);
      throw new MemoryStoreError(
        'EMBEDDER_FAILED',
        timedOut
          ? `The embeddings endpoint ${safeUrl} did not answer within ${settings.timeoutMs} ms`
          : `The embeddings endpoint ${safeUrl} could not be reached`,
        { cause: error, data: { url: safeUrl, reason: timedOut ? 'timeout' : 'network' } },
      );
    }
    if (!response.ok) {
      // The body may echo the request; only its length-limited start is kept, never the key.
      const detail = (await response.text().catch(() => '')).slice(0, 200);
      throw new MemoryStoreError(
        'EMBEDDER_FAILED',
        `The embeddings endpoint ${safeUrl} answered HTTP ${response.status}`,
        {
          data: {
            url: safeUrl,
            status: response.status,
            reason: response.status === 401 || response.status === 403 ? 'auth' : 'http',
            detail,
          },
        },
      );
    }
    let payload: unknown;
    try {
      payload = await response.json();
    } catch (error) {
      throw new MemoryStoreError(
        'EMBEDDER_FAILED',
        `The embeddings endpoint ${safeUrl} answered invalid JSON`,
        {
          cause: error,
          data: { url: safeUrl, reason: 'protocol' },
        },
      );
    }
    const checked = embeddingsResponseSchema.safeParse(payload);
    if (!checked.success || checked.data.data.length !== texts.length) {
      throw new MemoryStoreError(
        'EMBEDDER_FAILED',
        `The embeddings endpoint ${safeUrl} answered a body that is not an embeddings list for ${texts.length} inputs`,
        { data: { url: safeUrl, reason: 'protocol' } },
      );
    }
    const vectors: Float32Array[] = new Array(texts.length);
    for (const item of checked.data.data) {
      if (item.index >= texts.length || vectors[item.index] !== undefined) {
        throw new MemoryStoreError(
          'EMBEDDER_FAILED',
          `The embeddings endpoint ${safeUrl} answered bad indices`,
          {
            data: { url: safeUrl, reason: 'protocol' },
          },
        );
      }
      if (item.embedding.length !== settings.dimensions) {
        throw new MemoryStoreError(
          'DIMENSIONS_MISMATCH',
          `The model ${settings.model} answered ${item.embedding.length} dimensions; the store expects ${settings.dimensions}`,
          { data: { expected: settings.dimensions, actual: item.embedding.length } },
        );
      }
      const vector = Float32Array.from(item.embedding);
      if (!isFiniteVector(vector)) {
        throw new MemoryStoreError(
          'EMBEDDER_FAILED',
          `The embeddings endpoint ${safeUrl} answered non-finite numbers`,
          {
            data: { url: safeUrl, reason: 'protocol' },
          },
        );
      }
      vectors[item.index] = normalise(vector);
    }
    return vectors;
  };
  return {
    model: `openai-compatible:${settings.model}`,
    dimensions: settings.dimensions,
    kind: settings.kind,
    async embed(texts, embedOptions = {}) {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += settings.maxBatch) {
        out.push(...(await request(texts.slice(start, start + settings.maxBatch), embedOptions.signal)));
      }
      return out;
    },
  };
}

/** @internal Validates {@link TransformersEmbedderOptions}. */
export const transformersEmbedderOptionsSchema = z
  .object({
    modelPath: z.string().min(1),
    dimensions: z.number().int().min(1).max(65_536),
    pooling: z.enum(['mean', 'cls']).default('mean'),
  })
  .strict();

/** Options of {@link createTransformersEmbedder}. */
export interface TransformersEmbedderOptions {
  /**
   * Directory of a local ONNX model in the transformers.js layout
   * (`config.json`, `tokenizer.json`, `onnx/model.onnx`), such as a downloaded
   * `Xenova/all-MiniLM-L6-v2`. Nothing is fetched from the network.
   */
  modelPath: string;
  /** Length of the model's vectors (384 for MiniLM-L6). */
  dimensions: number;
  /**
   * How token vectors become one vector.
   * @default 'mean'
   */
  pooling?: 'mean' | 'cls' | undefined;
  /**
   * Loads the runtime; the default imports the optional peer dependency
   * `@huggingface/transformers`.
   */
  importRuntime?: (() => Promise<unknown>) | undefined;
}

interface TransformersRuntime {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
  pipeline(
    task: 'feature-extraction',
    model: string,
    options: Record<string, unknown>,
  ): Promise<
    (
      texts: string[],
      options: Record<string, unknown>,
    ) => Promise<{ data: ArrayLike<number>; dims: number[] }>
  >;
}

function isTransformersRuntime(value: unknown): value is TransformersRuntime {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { pipeline?: unknown }).pipeline === 'function' &&
    typeof (value as { env?: unknown }).env === 'object'
  );
}

/**
 * Loads a local ONNX sentence-embedding model through transformers.js, from a
 * directory on disk only. The runtime is an optional peer dependency
 * (`@huggingface/transformers`, with its onnxruntime binaries), loaded on the
 * first `embed`; without it `embed` rejects with `EMBEDDER_UNAVAILABLE`.
 */
export function createTransformersEmbedder(options: TransformersEmbedderOptions): Embedder {
  const { importRuntime, ...rest } = options;
  const settings = parseOptions(transformersEmbedderOptionsSchema, rest, 'local model');
  const load =
    importRuntime ??
    (() => {
      // A variable specifier keeps bundlers and the type checker from requiring the optional peer.
      const specifier = '@huggingface/transformers';
      return import(specifier);
    });
  const modelName = settings.modelPath.replace(/[/\\]+$/, '');
  let extractor: ReturnType<TransformersRuntime['pipeline']> | undefined;
  const getExtractor = () => {
    extractor ??= (async () => {
      let runtime: unknown;
      try {
        runtime = await load();
      } catch (error) {
        throw new MemoryStoreError(
          'EMBEDDER_UNAVAILABLE',
          'The local model embedder needs the optional package @huggingface/transformers; install it beside agentd',
          { cause: error },
        );
      }
      if (!isTransformersRuntime(runtime)) {
        throw new MemoryStoreError(
          'EMBEDDER_UNAVAILABLE',
          'The installed @huggingface/transformers has no pipeline()',
        );
      }
      runtime.env.allowRemoteModels = false;
      runtime.env.allowLocalModels = true;
      runtime.env.localModelPath = '';
      try {
        return await runtime.pipeline('feature-extraction', modelName, { local_files_only: true });
      } catch (error) {
        throw new MemoryStoreError(
          'EMBEDDER_UNAVAILABLE',
          `The local model at ${modelName} could not be loaded`,
          {
            cause: error,
            data: { modelPath: modelName },
          },
        );
      }
    })();
    extractor.catch(() => {
      // A failed load is retried on the next call (the package may be installed meanwhile).
      extractor = undefined;
    });
    return extractor;
  };
  return {
    model: `local:${createHash('sha256').update(modelName).digest('hex').slice(0, 12)}:${settings.pooling}`,
    dimensions: settings.dimensions,
    kind: 'semantic',
    async embed(texts) {
      if (texts.length === 0) return [];
      const run = await getExtractor();
      let output: { data: ArrayLike<number>; dims: number[] };
      try {
        output = await run(texts, { pooling: settings.pooling, normalize: true });
      } catch (error) {
        throw new MemoryStoreError('EMBEDDER_FAILED', 'The local model failed to embed', { cause: error });
      }
      const width = output.dims[output.dims.length - 1] ?? 0;
      if (width !== settings.dimensions) {
        throw new MemoryStoreError(
          'DIMENSIONS_MISMATCH',
          `The local model answered ${width} dimensions; the store expects ${settings.dimensions}`,
          { data: { expected: settings.dimensions, actual: width } },
        );
      }
      return texts.map((_, index) =>
        normalise(
          Float32Array.from(Array.prototype.slice.call(output.data, index * width, (index + 1) * width)),
        ),
      );
    },
  };
}
