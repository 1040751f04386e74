import type { Readability as ReadabilityClass } from '@mozilla/readability';
import type { parseHTML as ParseHTML } from 'linkedom';
import { checkHtmlDepth } from './html-depth.js';

const BLOCKS = 'p,div,br,li,h1,h2,h3,h4,h5,h6,tr,section,article,blockquote,pre,header,footer';

/** A DOM document as linkedom builds it. */
type Document = ReturnType<typeof ParseHTML>['document'];
/** The part of a DOM node these helpers use. */
interface Node {
  querySelectorAll(selector: string): Iterable<{ remove(): void; append(text: string): void }>;
  textContent: string | null;
}

interface Dom {
  parseHTML: typeof ParseHTML;
  Readability: typeof ReadabilityClass;
}
let dom: Promise<Dom> | undefined;

/**
 * linkedom and Readability, imported on the first HTML read: a daemon that never reads a
 * page or an HTML document never loads them.
 */
function loadDom(): Promise<Dom> {
  dom ??= Promise.all([import('linkedom'), import('@mozilla/readability')]).then(
    ([linkedom, readability]) => ({
      parseHTML: linkedom.parseHTML,
      Readability: readability.Readability,
    }),
  );
  return dom;
}

/**
 * linkedom builds no body for a bare fragment (`<p>hi</p>`, common in small pages and
 * attachments): such input is wrapped in a full document first.
 */
function wholeDocument(html: string): string {
  return /<html[\s>]/i.test(html) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`;
}

/** The visible text of an HTML string (see {@link visibleText}). */
export async function htmlToText(html: string, field = 'data'): Promise<string> {
  checkHtmlDepth(html, field);
  const { parseHTML } = await loadDom();
  return visibleText(parseHTML(wholeDocument(html)).document);
}

/**
 * The visible text of an HTML document or element: scripts, styles and templates dropped,
 * a line break after each block element, runs of blank space collapsed.
 */
function visibleText(document: Document): string {
  return visibleTextOf((document.body ?? document.documentElement) as unknown as Node | null);
}

function visibleTextOf(root: Node | null): string {
  if (!root) return '';
  for (const node of [...root.querySelectorAll('script,style,noscript,template')]) node.remove();
  for (const block of [...root.querySelectorAll(BLOCKS)]) block.append('\n');
  return tidy(root.textContent ?? '');
}

/** Collapses spaces within lines and blank lines between them. */
export function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\u00a0]+/g, ' ').trim())
    .filter((line, index, lines) => line !== '' || (index > 0 && lines[index - 1] !== ''))
    .join('\n')
    .trim();
}

/** What Readability made of a page, with the metadata it found. */
export interface Article {
  title: string;
  text: string;
  byline?: string | undefined;
  siteName?: string | undefined;
  excerpt?: string | undefined;
  lang?: string | undefined;
  publishedTime?: string | undefined;
}

/**
 * Extracts the main article of a page with `@mozilla/readability`; a page Readability finds
 * no article in (a short page, an app shell) falls back to its whole visible text.
 */
export async function extractArticle(html: string, field = 'url'): Promise<Article> {
  checkHtmlDepth(html, field);
  const { parseHTML, Readability } = await loadDom();
  const parseDocument = (source: string) => parseHTML(wholeDocument(source)).document;
  const document = parseDocument(html);
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() ?? '';
  const lang = document.documentElement?.getAttribute('lang') ?? undefined;
  // Readability mutates the document it reads; the fallback reads a fresh parse.
  let parsed: ReturnType<ReadabilityClass<string>['parse']> = null;
  try {
    parsed = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
      charThreshold: 100,
      // The article's visible text is taken from Readability's own element instead of
      // serialising it to HTML and parsing that again (a second parse of every page).
      serializer: (element) => visibleTextOf(element as unknown as Node),
    }).parse();
  } catch {
    parsed = null;
  }
  const text = parsed?.content ?? '';
  const base = { lang: parsed?.lang ?? lang ?? undefined };
  if (!parsed || text === '') {
    return { title: fallbackTitle, text: visibleText(parseDocument(html)), ...base };
  }
  return {
    title: parsed.title?.trim() || fallbackTitle,
    text,
    byline: parsed.byline ?? undefined,
    siteName: parsed.siteName ?? undefined,
    excerpt: parsed.excerpt ?? undefined,
    publishedTime: parsed.publishedTime ?? undefined,
    ...base,
  };
}
