import { readBoundedStream } from '@agentd/input-guards';
import { z } from 'zod';
import type { WebSearchSettings } from '../config.js';
import { BuiltinRefusal } from './builtins-refusal.js';

/** Largest SearXNG answer read; past it the request is dropped (a hostile endpoint cannot fill memory). */
export const MAX_SEARCH_BODY = 2 * 1024 * 1024;

/** The message of the builtin while no endpoint is configured (documented in the README). */
export const NOT_CONFIGURED =
  'web search is not configured: set orchestrate.webSearch.url to a SearXNG instance';

/**
 * The part of SearXNG's JSON answer the builtin reads. Results are parsed loosely first (an
 * answer may hold thousands, most of them beyond `maxResults`), then each kept one strictly:
 * string fields only, bounded lengths. zod builds fresh objects, so a `__proto__` key in the
 * answer never reaches a prototype.
 */
const answerSchema = z.object({ results: z.array(z.unknown()).max(10_000) });
const resultSchema = z.object({
  url: z.string().min(1).max(4096),
  title: z.string().max(1000).default(''),
  content: z.string().max(10_000).default(''),
});

/** One search hit handed to the script. */
export interface SearchHit {
  url: string;
  title: string;
  content: string;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Reads at most `max` bytes of a response body; past it the body is cancelled and this throws. */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<string> {
  const read = await readBoundedStream(body, max);
  if (!read.ok) throw new BuiltinRefusal(`web search answer is larger than ${max} bytes`);
  return read.bytes.toString('utf8');
}

/**
 * Asks the configured SearXNG instance (`GET <url>/search?q=...&format=json`) and answers at
 * most `maxResults` hits, each with an http(s) URL. The endpoint is the operator's choice (it
 * may be on a private network), so no private-network guard applies; the answer is still
 * bounded (size, deadline) and validated, and redirects are not followed.
 */
export async function webSearch(
  settings: WebSearchSettings | undefined,
  args: { query: string; maxResults?: number | undefined },
  signal: AbortSignal,
): Promise<{ query: string; results: SearchHit[] }> {
  if (!settings) throw new BuiltinRefusal(NOT_CONFIGURED);
  const endpoint = new URL(settings.url);
  endpoint.pathname = `${endpoint.pathname.replace(/\/+$/, '')}/search`;
  endpoint.search = new URLSearchParams({ q: args.query, format: 'json' }).toString();
  const deadline = AbortSignal.timeout(settings.timeoutMs);
  let text: string;
  try {
    const response = await fetch(endpoint, {
      signal: AbortSignal.any([signal, deadline]),
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      // SearXNG answers 403 to format=json unless its settings list json in search.formats.
      const hint = response.status === 403 ? " (is json in the instance's search.formats?)" : '';
      throw new BuiltinRefusal(`web search endpoint answered HTTP ${response.status}${hint}`);
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > MAX_SEARCH_BODY) {
      await response.body?.cancel().catch(() => undefined);
      throw new BuiltinRefusal(`web search answer is larger than ${MAX_SEARCH_BODY} bytes`);
    }
    text = await readCapped(response.body, MAX_SEARCH_BODY);
  } catch (error) {
    if (error instanceof BuiltinRefusal) throw error;
    if (deadline.aborted) throw new BuiltinRefusal(`web search timed out after ${settings.timeoutMs} ms`);
    // The endpoint URL is the operator's; the message names neither it nor its credentials.
    throw new BuiltinRefusal(`web search endpoint unreachable (${(error as Error).name})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BuiltinRefusal('web search endpoint answered invalid JSON');
  }
  const answer = answerSchema.safeParse(parsed);
  if (!answer.success) throw new BuiltinRefusal('web search endpoint answered an unexpected shape');
  const limit = Math.min(args.maxResults ?? settings.maxResults, settings.maxResults);
  const results: SearchHit[] = [];
  for (const row of answer.data.results) {
    if (results.length >= limit) break;
    const hit = resultSchema.safeParse(row);
    if (!hit.success || !isHttpUrl(hit.data.url)) continue;
    results.push({ url: hit.data.url, title: hit.data.title, content: hit.data.content });
  }
  return { query: args.query, results };
}
