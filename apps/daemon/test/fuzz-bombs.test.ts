import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  arrayBufferRise,
  DOCX_CONTENT_TYPES,
  lenientOnlyZlib,
  lzwZeros,
  nestedFlate,
  pagePdf,
  zerosDeflate,
  zerosZlib,
  zipOf,
} from '../../../packages/media/src/internal/bomb-files.js';
import { fuzzRuns, fuzzSeed } from './fuzz-arbitraries.js';
import { postRpc, startTestDaemon } from './helpers.js';

/*
 * Decompression bombs through the real gateway (issue #31): PDFs whose filter chains are
 * spelled every way pdf.js reads them, DOCX zip bombs, and skill archives from a registry on
 * a real socket. Each is answered with a documented error (or, for what the PDF check hands
 * to pdf.js undecoded, read), without the daemon's memory following the bomb, and the
 * daemon keeps answering. Seeded like fuzz.test.ts.
 */
const seed = fuzzSeed;
const runs = fuzzRuns;
const MiB = 1024 * 1024;

// Skill archives: each path of the registry answers one bomb.
const member = gzipSync(Buffer.alloc(16 * MiB), { level: 9 });
const ARCHIVES: Record<string, Buffer> = {
  'multi/latest.tar.gz': Buffer.concat(Array.from({ length: 200 }, () => member)),
  'twice/latest.tar.gz': gzipSync(gzipSync(Buffer.alloc(64 * MiB))),
  'one/latest.tar.gz': gzipSync(Buffer.alloc(256 * MiB), { level: 9 }),
};
const registry = createServer((req, res) => {
  const body = ARCHIVES[(req.url ?? '').replace(/^\/reg\//, '')];
  if (!body) res.writeHead(404).end();
  else res.writeHead(200, { 'content-type': 'application/gzip' }).end(body);
});
await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
const registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/reg`;

const daemon = await startTestDaemon({
  config: {
    skills: {
      import: { registries: [{ id: 'bombs', base: registryUrl, kind: 'tarball', trust: 'community' }] },
    },
  },
});
afterAll(async () => {
  await daemon.stop();
  registry.close();
});
const url = daemon.daemon.url;

async function call(method: string, params: unknown) {
  return postRpc(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
}

/** The answer, and how far the process's array-buffer memory rose while it was made. */
async function measured(method: string, params: unknown) {
  let answer: Awaited<ReturnType<typeof call>> | undefined;
  const rise = await arrayBufferRise(async () => {
    answer = await call(method, params);
  });
  return { answer: answer as Awaited<ReturnType<typeof call>>, rise };
}

type Body = { result?: unknown; error?: { code: number; message: string; data?: Record<string, unknown> } };

async function stillAnswers(): Promise<void> {
  const ping = await call('system.ping', {});
  expect(ping.body).toMatchObject({ result: { pong: true } });
}

/** How the page stream's filter chain is written. */
const spelling = fc.record({
  key: fc.constantFrom('/Filter', '/F', '/Fil#74er'),
  flate: fc.constantFrom('/FlateDecode', '/Fl', '/Fl#61teDecode'),
  byReference: fc.boolean(),
  comment: fc.boolean(),
  length: fc.constantFrom('exact', 'short', 'long'),
});

type Spelling = typeof spelling extends fc.Arbitrary<infer T> ? T : never;

/** What the stream holds: each payload inflates far past the 128 MiB budget. */
const payload = fc.constantFrom('nested', 'hex', 'lzw', 'runLength', 'single', 'lenient');

function bombPdf(s: Spelling, kind: string): { pdf: Buffer; refused: boolean } {
  const two = `[${s.flate} ${s.flate}]`;
  const [chain, data] = ((): [string, Buffer] => {
    switch (kind) {
      case 'nested':
        return [two, nestedFlate(1024)];
      case 'hex':
        return [`[/AHx ${s.flate} ${s.flate}]`, Buffer.from(`${nestedFlate(512).toString('hex')}>`)];
      case 'lzw':
        return ['/LZWDecode', lzwZeros(40_000)];
      case 'runLength':
        return [`[${s.flate} /RL]`, deflateSync(Buffer.alloc(4 * MiB, Buffer.from([0x81, 0x20])))];
      case 'single':
        return [s.flate, zerosZlib(300)];
      default:
        return [s.flate, lenientOnlyZlib(300)];
    }
  })();
  const dict = s.byReference ? `${s.key} 6 0 R` : `${s.key} ${chain}`;
  let pdf = pagePdf(dict, data, s.byReference ? [chain] : []).toString('latin1');
  const declared = `/Length ${data.length} `;
  if (s.length === 'short') pdf = pdf.replace(declared, `/Length ${Math.max(1, data.length - 40)} `);
  if (s.length === 'long') pdf = pdf.replace(declared, `/Length ${data.length + 4000} `);
  if (s.comment) pdf = pdf.replace('>> stream', '>> % page content\nstream');
  // Only the lenient payload is handed to pdf.js undecoded; every other one must be refused.
  return { pdf: Buffer.from(pdf, 'latin1'), refused: kind !== 'lenient' };
}

describe('fuzz: decompression bombs through the real gateway (issue #31)', () => {
  it('refuses PDF filter-chain bombs however the chain is spelled, in bounded memory', async () => {
    await fc.assert(
      fc.asyncProperty(spelling, payload, async (s, kind) => {
        const { pdf, refused } = bombPdf(s, kind);
        const { answer, rise } = await measured('media.extract_document', { data: pdf.toString('base64') });
        const body = answer.body as Body;
        const label = `${kind} ${JSON.stringify(s)} -> ${JSON.stringify(body).slice(0, 300)}`;
        if (refused) expect(body.error, label).toMatchObject({ code: -32602, data: { code: 'TOO_LARGE' } });
        else if (body.error) expect(body.error.code, label).toBe(-32602);
        expect(rise, label).toBeLessThan(160 * MiB);
      }),
      { seed, numRuns: runs },
    );
    await stillAnswers();
  }, 300_000);

  it('refuses DOCX zip bombs: a lying size, a hidden entry, an honest oversize', async () => {
    const lying = zipOf([
      { name: '[Content_Types].xml', data: DOCX_CONTENT_TYPES },
      { name: 'word/document.xml', data: Buffer.alloc(0), declared: 13, packed: zerosDeflate(512) },
    ]);
    const hidden = zipOf(
      [
        { name: '[Content_Types].xml', data: DOCX_CONTENT_TYPES },
        { name: 'word/document.xml', data: Buffer.from('<w:document/>') },
        { name: 'word/document.xml', data: Buffer.alloc(0), declared: 13, packed: zerosDeflate(512) },
      ],
      2,
    );
    const oversize = zipOf([
      { name: '[Content_Types].xml', data: DOCX_CONTENT_TYPES },
      { name: 'word/document.xml', data: Buffer.alloc(0), declared: 200 * MiB, packed: zerosDeflate(200) },
    ]);
    for (const [name, docx, code] of [
      ['lying', lying, 'CORRUPT_INPUT'],
      ['hidden', hidden, 'CORRUPT_INPUT'],
      ['oversize', oversize, 'TOO_LARGE'],
    ] as const) {
      const { answer, rise } = await measured('media.extract_document', { data: docx.toString('base64') });
      expect((answer.body as Body).error, name).toMatchObject({ code: -32602, data: { code } });
      expect(rise, name).toBeLessThan(64 * MiB);
    }
    await stillAnswers();
  }, 120_000);

  it('refuses skill archive bombs from the registry as invalid_archive', async () => {
    for (const name of ['multi', 'twice', 'one']) {
      const { answer, rise } = await measured('skills.import', { registry: 'bombs', name });
      expect((answer.body as Body).error, name).toMatchObject({
        code: -32000,
        data: { reason: 'invalid_archive' },
      });
      expect(rise, name).toBeLessThan(64 * MiB);
    }
    await stillAnswers();
  }, 120_000);
});
