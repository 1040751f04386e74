import { extractDocument } from './documents.js';
import { isMediaError, MediaError, type MediaErrorCode } from './errors.js';
import type { HostDecision } from '@agentd/input-guards';
import { guardedFetch } from './internal/guarded-fetch.js';
import { extractArticle, tidy } from './internal/html.js';
import { decodeText } from './internal/text-decoding.js';

/** One link read: its article and metadata, or why it could not be read. */
export type LinkResult =
  | {
      url: string;
      ok: true;
      /** URL after redirects. */
      finalUrl: string;
      status: number;
      contentType: string;
      title: string;
      /** Readable text (article body), cut at the per-link limit. */
      text: string;
      truncated: boolean;
      summary: string;
      /** `extractive`: sentences picked from the text; `model`: written by the configured model. */
      summarySource: 'extractive' | 'model';
      byline?: string | undefined;
      siteName?: string | undefined;
      excerpt?: string | undefined;
      lang?: string | undefined;
      publishedTime?: string | undefined;
    }
  | { url: string; ok: false; code: MediaErrorCode | 'FETCH_FAILED'; error: string };

/** What `link.process` answers. */
export interface LinkProcessResult {
  /** The message text followed by one block per link read (title and summary). */
  text: string;
  links: LinkResult[];
}

/** Limits and the guard a link fetch runs under. */
export interface LinkOptions {
  check: (hostname: string, port: number) => Promise<HostDecision>;
  maxLinks: number;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  maxChars: number;
  signal?: AbortSignal | undefined;
  /** Writes a summary with a model; absent, summaries are extractive. */
  summarize?: ((text: string, signal?: AbortSignal) => Promise<string>) | undefined;
}

// Stops at whitespace and at characters that cannot end a bare URL in prose.
const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`]+/gi;

/** Longest URL taken from text; longer runs are not links anyone wrote by hand. */
const MAX_URL_CHARS = 8192;

const OPENER: Readonly<Record<string, string>> = { ')': '(', ']': '[', '}': '{' };

/** `url` without trailing punctuation; a closing bracket stays when the URL opened one. */
function trimTrailing(url: string): string {
  // Bracket counts are kept as the end moves, so a URL ending in thousands of `)` is trimmed in
  // one pass instead of recounting the whole string per character.
  const count = (char: string) => url.split(char).length - 1;
  const open = { ')': count('('), ']': count('['), '}': count('{') };
  const close = { ')': count(')'), ']': count(']'), '}': count('}') };
  let end = url.length;
  while (end > 0 && /[.,;:!?)\]}]/.test(url[end - 1] as string)) {
    const last = url[end - 1] as ')' | ']' | '}' | '.';
    if (Object.hasOwn(OPENER, last)) {
      const bracket = last as ')' | ']' | '}';
      if (open[bracket] >= close[bracket]) break;
      close[bracket] -= 1;
    }
    end -= 1;
  }
  return url.slice(0, end);
}

/** The distinct http(s) URLs in `text`, in order, trailing punctuation trimmed. */
export function findUrls(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(URL_PATTERN)) {
    if (match[0].length > MAX_URL_CHARS) continue;
    const url = trimTrailing(match[0]);
    if (/^https?:\/\/./i.test(url)) found.add(url);
  }
  return [...found];
}

/** Reads one URL through the guard and extracts its article. */
export async function readLink(url: string, options: LinkOptions): Promise<LinkResult> {
  try {
    const page = await guardedFetch(url, options);
    let title = '';
    let body: string;
    let meta: Partial<Awaited<ReturnType<typeof extractArticle>>> = {};
    if (page.contentType === 'text/html' || page.contentType === 'application/xhtml+xml') {
      const article = await extractArticle(decodeText(page.body, page.charset));
      ({ title, text: body, ...meta } = article);
    } else if (page.contentType.startsWith('text/')) {
      body = tidy(decodeText(page.body, page.charset));
    } else if (page.contentType === 'application/pdf') {
      body = (await extractDocument(page.body, { maxChars: options.maxChars, field: 'url' })).text;
    } else {
      throw new MediaError('UNSUPPORTED_TYPE', `${page.url} is ${page.contentType}, not a page or document`, {
        data: { field: 'url', detected: page.contentType },
      });
    }
    const truncated = body.length > options.maxChars;
    const text = truncated ? body.slice(0, options.maxChars) : body;
    const summary = await summarizeText(text, options);
    return {
      url,
      ok: true,
      finalUrl: page.url,
      status: page.status,
      contentType: page.contentType,
      title,
      text,
      truncated,
      ...summary,
      ...definedOnly(meta),
    };
  } catch (error) {
    if (!isMediaError(error)) throw error;
    return { url, ok: false, code: error.code, error: error.message };
  }
}

/** Finds the URLs in `text`, reads up to `maxLinks` of them, and appends a block per link. */
export async function processLinks(text: string, options: LinkOptions): Promise<LinkProcessResult> {
  const urls = findUrls(text).slice(0, options.maxLinks);
  const links = await Promise.all(urls.map((url) => readLink(url, options)));
  const blocks = links.map((link) =>
    link.ok
      ? `[Link: ${link.title || link.finalUrl}](${link.finalUrl})\nSummary (${link.summarySource}): ${link.summary}`
      : `[Link: ${link.url}] could not be read: ${link.error}`,
  );
  return { text: blocks.length === 0 ? text : `${text}\n\n${blocks.join('\n\n')}`, links };
}

async function summarizeText(
  text: string,
  options: LinkOptions,
): Promise<{ summary: string; summarySource: 'extractive' | 'model' }> {
  if (options.summarize && text.length > 0) {
    try {
      return { summary: await options.summarize(text, options.signal), summarySource: 'model' };
    } catch {
      // The model failing is not the link failing: the extractive summary stands in, labelled so.
    }
  }
  return { summary: extractiveSummary(text), summarySource: 'extractive' };
}

const STOPWORDS = new Set(
  'a an and are as at be but by for from has have he her his i in is it its of on or our she that the their they this to was we were which will with you your'.split(
    ' ',
  ),
);

/**
 * Picks up to `count` sentences that carry the text's most frequent words, in their original
 * order: a summary that only ever quotes the page, so it cannot invent anything.
 */
export function extractiveSummary(text: string, count = 3, maxChars = 600): string {
  const sentences = (text.replace(/\s+/g, ' ').match(/[^.!?]+[.!?]+|[^.!?]+$/g) ?? [])
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 20);
  if (sentences.length <= count) return clip(sentences.join(' ') || text.trim(), maxChars);
  const words = (sentence: string) =>
    (sentence.toLowerCase().match(/\p{L}[\p{L}\p{N}'-]*/gu) ?? []).filter((word) => !STOPWORDS.has(word));
  const frequency = new Map<string, number>();
  for (const sentence of sentences)
    for (const word of words(sentence)) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const scored = sentences.map((sentence, index) => {
    const list = words(sentence);
    const score = list.reduce((sum, word) => sum + (frequency.get(word) ?? 0), 0) / Math.max(4, list.length);
    // The opening sentence of an article usually states its subject.
    return { index, sentence, score: index === 0 ? score * 1.5 : score };
  });
  const chosen = scored
    .sort((a, b) => b.score - a.score)
    .slice(0, count)
    .sort((a, b) => a.index - b.index);
  return clip(chosen.map((entry) => entry.sentence).join(' '), maxChars);
}

function clip(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1).trimEnd()}…`;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, item]) => item !== undefined && item !== ''),
  ) as Partial<T>;
}
