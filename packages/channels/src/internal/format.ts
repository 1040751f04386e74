/**
 * Markdown (what language models write) as each platform renders it. Discord renders Markdown
 * itself; Telegram gets the text without `parse_mode`, so nothing in it can be refused as a
 * malformed entity (MarkdownV2 would refuse every unescaped `.` or `-`); webchat clients render
 * what they like. Slack's `mrkdwn` and WhatsApp's formatting use other markers, so the text is
 * converted: code blocks and inline code are left as they are, the prose around them changed.
 */
export function formatFor(channelType: string, text: string): string {
  if (channelType === 'slack') return convertProse(text, slackProse, escapeSlack);
  if (channelType === 'whatsapp') return convertProse(text, whatsappProse, (code) => code);
  return text;
}

/**
 * Slack's three control characters, escaped everywhere in the text as Slack asks (`<` and `>`
 * would otherwise open a link or mention, `&` an entity).
 */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Markdown emphasis common to both conversions: `**b**` and `__b__` bold, `~~s~~` strike. */
function emphasis(text: string, bold: string, italic: string, strike: string): string {
  return (
    text
      // Bullets first, so a leading `* ` is not read as emphasis.
      .replace(/^([ \t]*)[*+-][ \t]+/gm, '$1• ')
      .replace(/(?<![*\w])\*(?![\s*])([^*\n]+?)(?<![\s*])\*(?![*\w])/g, `${italic}$1${italic}`)
      .replace(/\*\*(?!\s)([^\n]+?)(?<!\s)\*\*/g, `${bold}$1${bold}`)
      .replace(/(?<!\w)__(?!\s)([^\n]+?)(?<!\s)__(?!\w)/g, `${bold}$1${bold}`)
      .replace(/~~(?!\s)([^\n]+?)(?<!\s)~~/g, `${strike}$1${strike}`)
      // Headings last: the bold they become must not be read as italic.
      .replace(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm, `${bold}$1${bold}`)
  );
}

/** Prose as Slack mrkdwn: `*bold*`, `_italic_`, `~strike~`, links `<url|text>`, quotes kept. */
function slackProse(text: string): string {
  return emphasis(escapeSlack(text).replace(/^&gt;/gm, '>'), '*', '_', '~').replace(
    /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
    (_all, label: string, url: string) => `<${url}|${label.replace(/\|/g, '/')}>`,
  );
}

/** Prose as WhatsApp formats it: `*bold*`, `_italic_`, `~strike~`; links written out. */
function whatsappProse(text: string): string {
  return emphasis(text, '*', '_', '~').replace(
    /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g,
    (_all, label: string, url: string) => `${label} (${url})`,
  );
}

/**
 * Applies `prose` to the text outside fenced code blocks and inline code spans, and `code` to
 * what is inside them (fences and backticks kept: both platforms render them as code).
 */
function convertProse(text: string, prose: (text: string) => string, code: (text: string) => string): string {
  const out: string[] = [];
  let fence: string | undefined;
  let buffer: string[] = [];
  const flush = () => {
    if (buffer.length > 0) out.push(inlineCode(buffer.join('\n'), prose, code));
    buffer = [];
  };
  for (const line of text.split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      flush();
      fence = marker;
      out.push(code(line));
    } else if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      out.push(code(line));
    } else buffer.push(line);
  }
  flush();
  return out.join('\n');
}

/** `prose` on the text between inline code spans (`` `x` ``), `code` on the spans. */
function inlineCode(text: string, prose: (text: string) => string, code: (text: string) => string): string {
  const pieces = text.split(/(`[^`\n]+`)/);
  return pieces.map((piece, index) => (index % 2 === 1 ? code(piece) : prose(piece))).join('');
}
