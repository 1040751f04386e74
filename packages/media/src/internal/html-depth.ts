import { MediaError } from '../errors.js';

/**
 * Deepest element nesting read. linkedom's parse and Readability slow down with the square of
 * the depth (10,000 nested `<div>`s: five seconds; 100,000: minutes, all on the event loop),
 * while real pages stay under a few hundred levels.
 */
export const MAX_HTML_DEPTH = 1000;

const VOID = new Set(
  'area base br col embed hr img input keygen link meta param source track wbr'.split(' '),
);
// Closed implicitly by a sibling or the parent's end; a stray one never nests by itself.
const OPTIONAL_END = new Set(
  'p li dt dd tr td th option optgroup thead tbody tfoot colgroup rb rt rp'.split(' '),
);
const RAW_TEXT = new Set('script style textarea title xmp iframe noembed noframes'.split(' '));
const FOREIGN = new Set(['svg', 'math']);

/**
 * The element nesting depth an HTML parser would build, found in one linear pass that follows
 * htmlparser2's rules (the tokenizer linkedom uses): end tags close up to their open element
 * and are ignored when none is open, `/>` closes only inside SVG/MathML, raw-text elements and
 * comments hide their contents. Stops early once past `limit`.
 */
export function htmlDepth(html: string, limit = MAX_HTML_DEPTH): number {
  const lower = html.toLowerCase();
  const stack: string[] = [];
  const open = new Map<string, number>();
  let foreign = 0;
  let deepest = 0;
  const pop = () => {
    const name = stack.pop() as string;
    open.set(name, (open.get(name) ?? 1) - 1);
    if (FOREIGN.has(name)) foreign -= 1;
  };
  let at = lower.indexOf('<');
  while (at >= 0 && deepest <= limit) {
    if (lower.startsWith('<!--', at)) {
      const end = lower.indexOf('-->', at + 4);
      if (end < 0) break;
      at = lower.indexOf('<', end + 3);
      continue;
    }
    const close = lower[at + 1] === '/';
    const name = /^[a-z][a-z0-9-]*/.exec(lower.slice(at + (close ? 2 : 1), at + 66))?.[0];
    // A `<` that starts no tag is text: the next tag may follow right after it.
    if (!name) {
      at = lower.indexOf('<', at + 1);
      continue;
    }
    const end = lower.indexOf('>', at);
    if (end < 0) break;
    if (close) {
      if ((open.get(name) ?? 0) > 0) while (stack.length > 0 && stack.at(-1) !== name) pop();
      if (stack.at(-1) === name) pop();
    } else if (!VOID.has(name) && !OPTIONAL_END.has(name)) {
      const selfClosing = foreign > 0 && lower[end - 1] === '/';
      if (!selfClosing) {
        stack.push(name);
        open.set(name, (open.get(name) ?? 0) + 1);
        if (FOREIGN.has(name)) foreign += 1;
        deepest = Math.max(deepest, stack.length);
        if (RAW_TEXT.has(name)) {
          const closing = lower.indexOf(`</${name}`, end + 1);
          if (closing < 0) break;
          pop();
          at = lower.indexOf('<', lower.indexOf('>', closing) + 1 || lower.length);
          continue;
        }
      }
    }
    at = lower.indexOf('<', end + 1);
  }
  return deepest;
}

/** Refuses HTML nested deeper than {@link MAX_HTML_DEPTH} (`CORRUPT_INPUT` on `field`). */
export function checkHtmlDepth(html: string, field: string): void {
  if (htmlDepth(html) > MAX_HTML_DEPTH)
    throw new MediaError('CORRUPT_INPUT', `${field} is HTML nested deeper than ${MAX_HTML_DEPTH} elements`, {
      data: { field, maxDepth: MAX_HTML_DEPTH },
    });
}
