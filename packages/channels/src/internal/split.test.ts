import { describe, expect, it } from 'vitest';
import { formatFor } from './format.js';
import { messageLimit, splitMessage } from './split.js';

const words = (count: number, word = 'lorem') => Array.from({ length: count }, () => word).join(' ');

describe('splitMessage', () => {
  it('answers a text within the limit as it is', () => {
    const text = 'short\n\nreply';
    expect(splitMessage(text, 4096)).toEqual([text]);
    expect(splitMessage('x'.repeat(2000), 2000)).toEqual(['x'.repeat(2000)]);
  });

  it('cuts on paragraph breaks first, keeping every paragraph whole and in order', () => {
    const paragraphs = Array.from({ length: 12 }, (_, index) => `p${index} ${words(60)}`);
    const parts = splitMessage(paragraphs.join('\n\n'), 1000);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(1000);
    expect(parts.join('\n\n')).toBe(paragraphs.join('\n\n'));
    for (const part of parts) expect(part.startsWith('p')).toBe(true);
  });

  it('falls back to line breaks, then spaces, and cuts a word only when it is longer than the limit', () => {
    const lines = Array.from({ length: 30 }, (_, index) => `line ${index} ${words(10)}`).join('\n');
    const byLine = splitMessage(lines, 300);
    expect(byLine.join('\n')).toBe(lines);
    for (const part of byLine) expect(part.endsWith('lorem')).toBe(true);

    const prose = words(500);
    const byWord = splitMessage(prose, 100);
    expect(byWord.join(' ')).toBe(prose);
    for (const part of byWord) expect(part).toMatch(/^lorem( lorem)*$/);

    const long = 'a'.repeat(250);
    expect(splitMessage(long, 100)).toEqual(['a'.repeat(100), 'a'.repeat(100), 'a'.repeat(50)]);
  });

  it('never cuts between the two halves of a surrogate pair', () => {
    const text = '😀'.repeat(3000); // 6000 UTF-16 code units, no spaces
    const parts = splitMessage(text, 4095);
    expect(parts.join('')).toBe(text);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(4095);
      // No lone half of a pair at either end: every part is whole emoji.
      expect(part).toMatch(/^(?:😀)+$/u);
    }
  });

  it('closes a code block a cut falls inside and opens it again with its info string', () => {
    const code = Array.from({ length: 200 }, (_, index) => `const value${index} = ${index};`).join('\n');
    const text = `Here is the file:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is all.`;
    const parts = splitMessage(text, 2000);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(2000);
      // Every part has balanced fences: it renders as its own message.
      expect((part.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(parts[1]?.startsWith('```ts\n')).toBe(true);
    expect(parts.at(-1)?.endsWith('That is all.')).toBe(true);
    const lines = parts
      .join('\n')
      .split('\n')
      .filter((line) => line.startsWith('const '));
    expect(lines).toEqual(code.split('\n'));
  });

  it('has a limit per platform and none for webchat', () => {
    expect(['telegram', 'discord', 'slack', 'whatsapp', 'webchat'].map(messageLimit)).toEqual([
      4096,
      2000,
      4000,
      4096,
      Infinity,
    ]);
    expect(messageLimit('__proto__')).toBe(Infinity);
  });
});

describe('formatFor', () => {
  const markdown = [
    '# Title',
    'Some **bold**, *italic*, ~~gone~~ and a [link](https://example.com/a?b=1&c=2).',
    '- first <tag>',
    '> quoted',
    '`**not bold**` stays code',
    '```',
    'a **b** < c',
    '```',
  ].join('\n');

  it('turns Markdown into Slack mrkdwn, escaping & < > and leaving code alone', () => {
    expect(formatFor('slack', markdown).split('\n')).toEqual([
      '*Title*',
      'Some *bold*, _italic_, ~gone~ and a <https://example.com/a?b=1&amp;c=2|link>.',
      '• first &lt;tag&gt;',
      '> quoted',
      '`**not bold**` stays code',
      '```',
      'a **b** &lt; c',
      '```',
    ]);
  });

  it("uses WhatsApp's markers and writes links out", () => {
    expect(formatFor('whatsapp', markdown).split('\n').slice(0, 3)).toEqual([
      '*Title*',
      'Some *bold*, _italic_, ~gone~ and a link (https://example.com/a?b=1&c=2).',
      '• first <tag>',
    ]);
  });

  it('sends Telegram, Discord and webchat text as it is', () => {
    for (const type of ['telegram', 'discord', 'webchat']) expect(formatFor(type, markdown)).toBe(markdown);
  });
});
