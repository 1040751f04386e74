/**
 * The longest text one message may hold, per channel type, counted in UTF-16 code units (a
 * JavaScript string's `length`). Telegram counts UTF-16 code units of the text after entity
 * parsing (the text is sent without `parse_mode`, so that is the text itself); Discord, Slack and
 * WhatsApp count characters, and no text has more characters than UTF-16 code units, so a part
 * within the limit here is within theirs. Webchat has no limit.
 */
export const MESSAGE_LIMITS: Readonly<Record<string, number>> = {
  telegram: 4096,
  discord: 2000,
  slack: 4000,
  whatsapp: 4096,
};

/** The limit of a channel type (`Infinity` where there is none). */
export function messageLimit(channelType: string): number {
  return Object.hasOwn(MESSAGE_LIMITS, channelType) ? (MESSAGE_LIMITS[channelType] as number) : Infinity;
}

/** A fence line: up to three spaces, then three or more backticks or tildes, then the info string. */
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** The code fence open at the end of `text`, given the one open at its start (`undefined` if none). */
function fenceAtEnd(text: string, open: string | undefined): string | undefined {
  let fence = open;
  for (const line of text.split('\n')) {
    const match = FENCE.exec(line);
    if (!match) continue;
    const marker = match[1] as string;
    if (fence === undefined) fence = line.trim().length > 64 ? marker : line.trimStart();
    else {
      const openMarker = FENCE.exec(fence)?.[1] ?? '```';
      // A closing fence: the same character, at least as long, no info string.
      if (marker[0] === openMarker[0] && marker.length >= openMarker.length && (match[2] ?? '').trim() === '')
        fence = undefined;
    }
  }
  return fence;
}

/** The marker that closes `fence` (its backticks or tildes). */
const closerOf = (fence: string): string => FENCE.exec(fence)?.[1] ?? '```';

/**
 * Where to cut `text` so that its first part holds at most `budget` code units: after the last
 * paragraph break within it, else the last line break, else the last space; a hard cut only
 * when one word is longer than the budget, and never between the two halves of a surrogate pair.
 * Answers the end of the part and where the rest begins.
 */
function cutPoint(text: string, budget: number): { end: number; next: number } {
  const window = text.slice(0, budget + 1);
  const paragraph = window.lastIndexOf('\n\n');
  if (paragraph > 0) return { end: paragraph, next: paragraph + 2 };
  const line = window.lastIndexOf('\n');
  if (line > 0) return { end: line, next: line + 1 };
  for (let at = Math.min(budget, window.length - 1); at > 0; at--) {
    const code = window.charCodeAt(at);
    if (code === 32 || code === 9) return { end: at, next: at + 1 };
  }
  let end = budget;
  const before = text.charCodeAt(end - 1);
  if (before >= 0xd800 && before <= 0xdbff && end > 1) end -= 1;
  return { end, next: end };
}

/**
 * Splits `text` into parts of at most `limit` UTF-16 code units, in order (see
 * {@link cutPoint}). A code block a cut falls inside is closed at the end of its part and opened
 * again, with the same fence line, at the start of the next. A text within the limit is
 * answered as it is, after one length check.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (text.length <= limit) return [text];
  const parts: string[] = [];
  let rest = text;
  let open: string | undefined;
  while (rest.length > 0) {
    const prefix = open === undefined ? '' : `${open}\n`;
    if (prefix.length + rest.length <= limit) {
      parts.push(prefix + rest);
      break;
    }
    let budget = limit - prefix.length;
    let cut = cutPoint(rest, budget);
    let fence = fenceAtEnd(rest.slice(0, cut.end), open);
    if (fence !== undefined) {
      // Room for the line break and closing fence the part then ends with.
      budget = Math.max(1, limit - prefix.length - 1 - closerOf(fence).length);
      cut = cutPoint(rest, budget);
      fence = fenceAtEnd(rest.slice(0, cut.end), open);
    }
    const body = rest.slice(0, cut.end);
    parts.push(fence === undefined ? prefix + body : `${prefix}${body}\n${closerOf(fence)}`);
    open = fence;
    rest = rest.slice(cut.next);
    // Blank lines between parts carry nothing; inside a code block they are kept.
    if (open === undefined) rest = rest.replace(/^\n+/, '');
  }
  return parts.filter((part) => part.trim().length > 0);
}
