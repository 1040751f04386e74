import { describe, expect, it } from 'vitest';
import { extractDocument } from '../documents.js';
import { isMediaError } from '../errors.js';
import { htmlDepth } from './html-depth.js';
import { extractArticle } from './html.js';

describe('htmlDepth', () => {
  it('measures nesting the way the parser builds it', () => {
    expect(htmlDepth('<html><body><div><p>a<p>b<br><img src=x></div></body></html>')).toBe(3);
    // Stray end tags close nothing; end tags close up to their element.
    expect(htmlDepth('<div></b><div></b><div>')).toBe(3);
    expect(htmlDepth('<div><span><b></div><div>')).toBe(3);
    // `/>` closes only inside SVG; comments, scripts and text `<` hide nothing else.
    expect(htmlDepth('<svg><path/><path/><g><path d="1"/></g></svg>')).toBe(2);
    expect(htmlDepth('<div/><div/><div/>')).toBe(3);
    expect(htmlDepth('<!-- <div><div> --><script>"<div><div>"</script>a < b <div>')).toBe(1);
    expect(htmlDepth('< <div>'.repeat(50))).toBe(50);
  });

  it('refuses HTML nested past 1000 levels before parsing it, in documents and links', async () => {
    const deep = `<html><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`;
    const started = performance.now();
    await expect(extractArticle(deep)).rejects.toSatisfy(
      (error) => isMediaError(error, 'CORRUPT_INPUT') && error.data?.field === 'url',
    );
    await expect(extractDocument(Buffer.from(deep), { maxChars: 100 })).rejects.toSatisfy(
      (error) => isMediaError(error, 'CORRUPT_INPUT') && error.data?.maxDepth === 1000,
    );
    expect(performance.now() - started).toBeLessThan(2000);
    const fine = `<html><body>${'<div>'.repeat(900)}still read${'</div>'.repeat(900)}</body></html>`;
    expect((await extractDocument(Buffer.from(fine), { maxChars: 100 })).text).toBe('still read');
  });
});
