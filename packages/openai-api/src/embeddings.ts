import { z } from 'zod';
import { invalidRequest } from './errors.js';
import type { EmbedResult } from './types.js';

/** The fields of `POST /v1/embeddings` that are read; token-array inputs are refused by name. */
export const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.union([
    z.string().min(1).max(1_000_000),
    z.array(z.string().min(1).max(1_000_000)).min(1).max(2048),
  ]),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  dimensions: z.number().int().min(1).max(65_536).nullish(),
  user: z.string().max(256).nullish(),
});

/**
 * Refuses token-id inputs (`[1, 2]` or `[[1, 2]]`) with a 400 that says why: the embedders read
 * text and no tokenizer could turn the ids back into it faithfully.
 */
export function refuseTokenInput(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const input = (body as { input?: unknown }).input;
  if (!Array.isArray(input)) return;
  const at = input.findIndex((item) => typeof item === 'number' || Array.isArray(item));
  if (at >= 0) {
    throw invalidRequest(
      'Token-id input is not taken: this server embeds text; send input as a string or an array of strings',
      typeof input[at] === 'number' ? 'input' : `input[${at}]`,
    );
  }
}

/** A parsed embeddings request. */
export type EmbeddingsRequest = z.output<typeof embeddingsRequestSchema>;

/** Little-endian float32 bytes in base64, the `encoding_format: base64` the OpenAI SDKs ask for by default. */
function toBase64(vector: ArrayLike<number>): string {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/**
 * A rough token count (four characters a token): the memory embedders do not report tokens and
 * `usage` is required by the format.
 */
function estimateTokens(texts: string[]): number {
  return texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
}

/** The body of an embeddings answer. */
export function embeddingsBody(request: EmbeddingsRequest, input: string[], result: EmbedResult) {
  const base64 = request.encoding_format === 'base64';
  const tokens = estimateTokens(input);
  return {
    object: 'list',
    data: result.vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? toBase64(vector) : Array.from(vector),
    })),
    model: result.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
