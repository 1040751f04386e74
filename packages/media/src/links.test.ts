import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMediaService } from './media-service.js';
import { extractiveSummary, findUrls } from './links.js';

const ARTICLE = `<!doctype html><html lang="en"><head><title>Tide tables | Harbour News</title>
<meta property="og:site_name" content="Harbour News"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Spring tides arrive early this year</h1><p class="byline">By Ada Lovelace</p>
<p>The harbour master confirmed on Monday that spring tides will arrive two weeks earlier than usual this year, because of the alignment of the moon and the sun.</p>
<p>Fishermen in the harbour have been asked to move their boats to the inner moorings before the spring tides, which are expected to rise a full metre above normal.</p>
<p>The harbour office will publish updated tide tables every morning, and the lighthouse will show a second signal while the spring tides last.</p>
<p>Residents near the sea wall should keep their doors closed at high tide, the harbour master added, and report any flooding to the harbour office.</p>
</article><footer>Copyright Harbour News</footer></body></html>`;

/** A link that was not read: its code, and an error message that names `cause`. */
const failed = (code: string, cause: string) => ({ ok: false, code, error: expect.stringContaining(cause) });

let server: Server;
let base: string;
let port: number;

beforeEach(async () => {
  server = createServer((req, res) => {
    if (req.url === '/article')
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
    else if (req.url === '/gzip')
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync(ARTICLE));
    else if (req.url === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(50_000));
    else if (req.url === '/to-localhost')
      res.writeHead(302, { location: `http://localhost:${port}/article` }).end();
    else if (req.url === '/hop') res.writeHead(301, { location: '/article' }).end();
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('findUrls', () => {
  it('finds distinct http(s) URLs and trims prose punctuation', () => {
    expect(
      findUrls(
        'See https://a.example/x, and (https://b.example/y). Also https://a.example/x! ftp://c.example no.',
      ),
    ).toEqual(['https://a.example/x', 'https://b.example/y']);
    expect(findUrls('https://en.wikipedia.org/wiki/Foo_(bar) ok')).toEqual([
      'https://en.wikipedia.org/wiki/Foo_(bar)',
    ]);
  });

  it('stays linear on hostile text: long runs of closing brackets, overlong and empty URLs', () => {
    const started = performance.now();
    expect(findUrls(`see http://a.example/${')'.repeat(8100)}`)).toEqual(['http://a.example/']);
    expect(findUrls(`see http://a.example/${')'.repeat(90_000)}`)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(findUrls(`https://x.example/${'a'.repeat(9000)} https://ok.example`)).toEqual([
      'https://ok.example',
    ]);
    expect(findUrls('http://.... https://[a](b)) http://a')).toEqual(['https://[a](b)', 'http://a']);
  });
});

describe('extractiveSummary', () => {
  it('quotes sentences of the text only', () => {
    const text =
      'Alpha tides rise. '.repeat(1) +
      'The tides rise early this spring in the harbour. Gulls are loud. The harbour tides matter to boats. Unrelated filler sentence here.';
    const summary = extractiveSummary(text, 2);
    for (const sentence of summary.split(/(?<=\.) /)) expect(text).toContain(sentence);
  });
});

describe('MediaService.processLinks', () => {
  it('refuses a loopback page by default (private-network guard)', async () => {
    const media = createMediaService();
    const result = await media.processLinks({ text: `read ${base}/article please` });
    expect(result.links).toEqual([
      expect.objectContaining({ ok: false, code: 'BLOCKED_ADDRESS', url: `${base}/article` }),
    ]);
    expect(result.links[0]).toMatchObject({ error: expect.stringContaining('loopback') });
    media.close();
  });

  it('returns title, readable text, metadata and a labelled summary for an allowed page', async () => {
    const media = createMediaService({ section: { links: { allowedHosts: [`127.0.0.1:${port}`] } } });
    const result = await media.processLinks({ text: `news: ${base}/article` });
    const [link] = result.links;
    expect(link).toMatchObject({
      ok: true,
      finalUrl: `${base}/article`,
      status: 200,
      contentType: 'text/html',
      summarySource: 'extractive',
      lang: 'en',
    });
    if (!link?.ok) throw new Error('expected a read link');
    expect(link.title).toContain('Tide tables');
    expect(link.text).toContain('spring tides will arrive two weeks earlier');
    expect(link.text).not.toContain('Copyright Harbour News');
    expect(link.summary.length).toBeGreaterThan(40);
    const flat = link.text.replace(/\s+/g, ' ');
    for (const sentence of link.summary.split(/(?<=[.!?]) /)) expect(flat).toContain(sentence);
    expect(result.text.startsWith(`news: ${base}/article\n\n[Link: `)).toBe(true);
    expect(result.text).toContain('Summary (extractive): ');
    media.close();
  });

  it('decompresses gzip and follows a same-host redirect, but re-checks a redirect to another host', async () => {
    const media = createMediaService({ section: { links: { allowedHosts: [`127.0.0.1:${port}`] } } });
    const { links } = await media.processLinks({ text: `${base}/gzip ${base}/hop ${base}/to-localhost` });
    expect(links.map((link) => link.ok)).toEqual([true, true, false]);
    expect(links[1]).toMatchObject({ finalUrl: `${base}/article` });
    expect(links[2]).toMatchObject(failed('BLOCKED_ADDRESS', 'localhost'));
    media.close();
  });

  it('caps the body size and reports HTTP errors per link', async () => {
    const media = createMediaService({
      section: { links: { allowPrivateNetwork: true, maxBytes: 10_000 } },
    });
    const { links } = await media.processLinks({ text: `${base}/big ${base}/missing` });
    expect(links[0]).toMatchObject({ ok: false, code: 'TOO_LARGE' });
    expect(links[1]).toMatchObject(failed('FETCH_FAILED', '404'));
    media.close();
  });

  it('refuses a host name that resolves to a loopback address', async () => {
    const media = createMediaService({ resolveHost: async () => ['127.0.0.1'] });
    const { links } = await media.processLinks({ text: `http://rebind.example:${port}/article` });
    expect(links[0]).toMatchObject(failed('BLOCKED_ADDRESS', '127.0.0.1'));
    media.close();
  });

  it('connects to the address the guard checked, not to a second DNS answer', async () => {
    // The system resolver knows no pinned.example; only the checked address can be reached.
    const media = createMediaService({
      section: { links: { allowedHosts: ['pinned.example'] } },
      resolveHost: async () => ['127.0.0.1'],
    });
    const { links } = await media.processLinks({ text: `http://pinned.example:${port}/article` });
    expect(links[0]).toMatchObject({ ok: true, finalUrl: `http://pinned.example:${port}/article` });
    media.close();
  });
});
