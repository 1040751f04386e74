import { z } from 'zod';
import { MemoryStoreError } from './errors.js';
import { parseOptions } from './internal/inputs.js';

/** Orders recall candidates by relevance to the query; higher scores are better. */
export interface Reranker {
  /** Names the model, for logs and stats. */
  readonly model: string;
  /**
   * One score per document, in document order. The store passes `scores`, the fused
   * first-stage score of each document (higher is better), for rerankers that refine
   * rather than replace that order; others ignore it.
   */
  rerank(
    query: string,
    documents: string[],
    options?: { signal?: AbortSignal | undefined; scores?: readonly number[] | undefined },
  ): Promise<number[]>;
}

/** @internal Validates {@link HttpRerankerOptions}. */
export const httpRerankerOptionsSchema = z
  .object({
    baseUrl: z.string().url(),
    model: z.string().min(1),
    apiKey: z.string().min(1).optional(),
  })
  .strict();

/** Options of {@link createHttpReranker}. */
export interface HttpRerankerOptions {
  /** Server root or its `/v1` path (llama.cpp server, vLLM, Jina, Cohere-compatible gateways). */
  baseUrl: string;
  /** Model name sent with every request. */
  model: string;
  /** Sent as a bearer token; never logged. */
  apiKey?: string | undefined;
  /**
   * The fetch to call.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch | undefined;
}

const rerankResponseSchema = z.object({
  results: z.array(z.object({ index: z.number().int().min(0), relevance_score: z.number() })),
});

/**
 * A reranker speaking the `/v1/rerank` API that llama.cpp's server, vLLM, Jina
 * and Cohere-compatible gateways serve: `{model, query, documents}` in,
 * `{results: [{index, relevance_score}]}` out. The store applies its own timeout.
 */
export function createHttpReranker(options: HttpRerankerOptions): Reranker {
  const { fetch: fetchImpl = globalThis.fetch, ...rest } = options;
  const settings = parseOptions(httpRerankerOptionsSchema, rest, 'reranker');
  const trimmed = settings.baseUrl.replace(/\/+$/, '');
  const url = trimmed.endsWith('/v1') ? `${trimmed}/rerank` : `${trimmed}/v1/rerank`;
  return {
    model: settings.model,
    async rerank(query, documents, rerankOptions = {}) {
      if (documents.length === 0) return [];
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (settings.apiKey !== undefined) headers.authorization = `Bearer ${settings.apiKey}`;
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: settings.model, query, documents, top_n: documents.length }),
          ...(rerankOptions.signal === undefined ? {} : { signal: rerankOptions.signal }),
        });
      } catch (error) {
        throw new MemoryStoreError('RERANKER_FAILED', 'The reranker could not be reached', {
          cause: error,
          data: { reason: 'network' },
        });
      }
      if (!response.ok) {
        throw new MemoryStoreError('RERANKER_FAILED', `The reranker answered HTTP ${response.status}`, {
          data: { status: response.status, reason: 'http' },
        });
      }
      const checked = rerankResponseSchema.safeParse(await response.json().catch(() => undefined));
      if (!checked.success) {
        throw new MemoryStoreError('RERANKER_FAILED', 'The reranker answered a body without results', {
          data: { reason: 'protocol' },
        });
      }
      const scores = new Array<number>(documents.length).fill(Number.NEGATIVE_INFINITY);
      for (const result of checked.data.results) {
        if (result.index < documents.length) scores[result.index] = result.relevance_score;
      }
      return scores;
    },
  };
}
