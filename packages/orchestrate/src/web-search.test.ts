import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { orchestrateFixture } from '../test/helpers.js';

let fixture: Awaited<ReturnType<typeof orchestrateFixture>> | undefined;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  await fixture?.cleanup();
  fixture = undefined;
});

/** A fake SearXNG: `GET /searx/search?q=...&format=json`, one behaviour per query. */
async function fakeSearxng(): Promise<{ url: string; seen: URL[] }> {
  const seen: URL[] = [];
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    seen.push(url);
    if (url.pathname !== '/searx/search' || url.searchParams.get('format') !== 'json') {
      response.writeHead(404).end();
      return;
    }
    const q = url.searchParams.get('q');
    const json = (body: string) => response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    if (q === 'forbidden') return void response.writeHead(403).end('Forbidden');
    if (q === 'bad json') return json('{"results": [');
    if (q === 'slow') return; // never answers: the builtin's deadline ends it
    if (q === 'oversized') {
      // Streamed without a content-length, so only the bounded read can stop it.
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"results": [');
      const row = JSON.stringify({ url: 'https://example.com/x', title: 't', content: 'x'.repeat(1000) });
      let sent = 0;
      const pump = () => {
        while (sent < 4000) {
          sent += 1;
          if (!response.write(`${row},`)) return void response.once('drain', pump);
        }
        response.end(`${row}]}`);
      };
      pump();
      return;
    }
    if (q === 'hostile') {
      const rows: unknown[] = [
        JSON.parse('{"__proto__": {"polluted": true}, "url": "https://ok.example/1", "title": "one"}'),
        { url: 'javascript:alert(1)', title: 'script', content: '' },
        { url: 'file:///etc/passwd', title: 'file', content: '' },
        { url: 42, title: 'number url', content: '' },
        { url: 'https://ok.example/2', title: { toString: 'x' }, content: '' },
        { url: 'https://ok.example/3', title: 'three', content: 'third' },
      ];
      for (let i = 0; i < 5000; i += 1) rows.push({ url: `https://many.example/${i}`, title: `m${i}` });
      return json(JSON.stringify({ results: rows }));
    }
    if (q === 'not a list') return json(JSON.stringify({ results: { url: 'https://x.example' } }));
    return json(
      JSON.stringify({
        query: q,
        number_of_results: 2,
        results: [
          { url: 'https://agentd.example/docs', title: 'agentd docs', content: 'About agentd', engine: 'x' },
          { url: 'http://agentd.example/blog', title: 'agentd blog', content: 'News' },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/searx/`, seen };
}

const SCRIPT = `
  import { invoke } from '/agentd/orch.mjs';
  const out = {};
  for (const query of ['agentd', 'bad json', 'oversized', 'slow', 'hostile', 'not a list', 'forbidden']) {
    out[query] = await invoke('web_search', { query }).then(
      (value) => ({ ok: value }),
      (error) => ({ code: error.code, message: error.message, errorKind: error.data?.errorKind }),
    );
  }
  out.fewer = await invoke('web_search', { query: 'agentd', maxResults: 1 });
  out.badArgs = await invoke('web_search', { query: '' }).then(() => 'allowed', (error) => error.message);
  out.polluted = ({}).polluted ?? null;
  console.log(JSON.stringify(out));
`;

describe('web_search builtin', () => {
  it('asks the configured SearXNG from a jailed script: results, bad JSON, oversized, timeout, hostile answers', async () => {
    const fake = await fakeSearxng();
    fixture = await orchestrateFixture({
      orchestrate: { webSearch: { url: fake.url, maxResults: 3, timeoutMs: 500 } },
    });
    const result = await fixture.runScript({
      language: 'js',
      script: SCRIPT,
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.agentd).toEqual({
      ok: {
        query: 'agentd',
        results: [
          { url: 'https://agentd.example/docs', title: 'agentd docs', content: 'About agentd' },
          { url: 'http://agentd.example/blog', title: 'agentd blog', content: 'News' },
        ],
      },
    });
    expect(out.fewer.results).toHaveLength(1);
    expect(out['bad json']).toEqual({
      code: -32000,
      message: 'web search endpoint answered invalid JSON',
      errorKind: 'tool_error',
    });
    expect(out.oversized).toMatchObject({
      code: -32000,
      message: expect.stringMatching(/larger than \d+ bytes/),
    });
    expect(out.slow).toMatchObject({ code: -32000, message: 'web search timed out after 500 ms' });
    expect(out['not a list']).toMatchObject({
      code: -32000,
      message: 'web search endpoint answered an unexpected shape',
    });
    expect(out.forbidden).toMatchObject({
      code: -32000,
      message: "web search endpoint answered HTTP 403 (is json in the instance's search.formats?)",
    });
    // Non-http(s) URLs and non-string fields are dropped; the cap holds over a huge array.
    expect(out.hostile.ok.results).toEqual([
      { url: 'https://ok.example/1', title: 'one', content: '' },
      { url: 'https://ok.example/3', title: 'three', content: 'third' },
      { url: 'https://many.example/0', title: 'm0', content: '' },
    ]);
    expect(Object.hasOwn(out.hostile.ok.results[0], '__proto__')).toBe(false);
    expect(out.polluted).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(out.badArgs).toMatch(/^args\.query: /);
    expect(fake.seen[0]?.searchParams.get('q')).toBe('agentd');
    expect(result.toolCalls).toEqual(
      expect.arrayContaining([
        { tool: 'web_search', capability: 'orchestrate', decision: 'allowed', count: 3 },
        { tool: 'web_search', capability: 'orchestrate', decision: 'error', count: 6 },
      ]),
    );
  });

  it('answers a clear error, never a result, when no endpoint is configured', async () => {
    fixture = await orchestrateFixture();
    const result = await fixture.runScript({
      language: 'js',
      script: `
        import { invoke } from '/agentd/orch.mjs';
        const out = await invoke('web_search', { query: 'agentd' }).then(
          (value) => ({ ok: value }),
          (error) => ({ code: error.code, message: error.message }),
        );
        console.log(JSON.stringify(out));
      `,
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      code: -32000,
      message: 'web search is not configured: set orchestrate.webSearch.url to a SearXNG instance',
    });
  });

  it('refuses an endpoint that is not http(s) or carries credentials', async () => {
    const { orchestrateSectionSchema } = await import('./config.js');
    for (const url of ['ftp://searx.example', 'http://user:pw@searx.example', 'not a url']) {
      expect(orchestrateSectionSchema.safeParse({ webSearch: { url } }).success).toBe(false);
    }
    expect(orchestrateSectionSchema.parse({ webSearch: { url: 'http://10.0.0.5:8888' } }).webSearch).toEqual({
      url: 'http://10.0.0.5:8888',
      maxResults: 10,
      timeoutMs: 10_000,
    });
  });
});
