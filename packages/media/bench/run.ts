/**
 * Media benchmark: document extraction and link reading against the bare library calls on
 * the same inputs in the same run (the overhead of sniffing, guards and bounding; aim under
 * 1.2x), and the keyless transcriber's real-time factor (processing time / audio length).
 *
 * Run: `npx -y pnpm@10 bench media`
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { extractText } from 'unpdf';
import { interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { createMediaService, extractDocument } from '../src/index.js';

const loop = (work: () => Promise<unknown>) => async (ms: number) => {
  const until = performance.now() + ms;
  let ops = 0;
  while (performance.now() < until) {
    await work();
    ops += 1;
  }
  return ops;
};

// A ten-page PDF, read as a whole per operation.
const pdfDoc = await PDFDocument.create();
const font = await pdfDoc.embedFont(StandardFonts.Helvetica);
for (let page = 0; page < 10; page += 1) {
  const sheet = pdfDoc.addPage();
  for (let line = 0; line < 40; line += 1)
    sheet.drawText(`Page ${page} line ${line}: the tide tables and the harbour notes.`, {
      x: 40,
      y: 760 - line * 18,
      size: 11,
      font,
    });
}
const pdf = await pdfDoc.save();
const documents = await interleave([
  {
    name: 'unpdf extractText (bare)',
    runFor: loop(() => extractText(new Uint8Array(pdf), { mergePages: false })),
  },
  { name: 'extractDocument (PDF)', runFor: loop(() => extractDocument(pdf, { maxChars: 1_000_000 })) },
]);
printComparison('PDF extraction, 10 pages per op', documents, {
  aims: { 'extractDocument (PDF)': { above: 1 / 1.2 } },
});

const article = `<!doctype html><html><head><title>Bench article</title></head><body><nav>menu</nav><article>${Array.from(
  { length: 30 },
  (_, index) =>
    `<p>Paragraph ${index} tells how the lighthouse keeper trimmed the wick and logged the passing ships.</p>`,
).join('')}</article></body></html>`;
const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(article));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
const url = `http://127.0.0.1:${port}/a`;
const media = createMediaService({
  section: { links: { allowedHosts: [`127.0.0.1:${port}`] } },
  agentDir: (id) => join(tmpdir(), 'media-bench', id),
});
const links = await interleave([
  {
    name: 'fetch + linkedom + Readability (bare)',
    runFor: loop(async () => {
      const html = await (await fetch(url)).text();
      new Readability(parseHTML(html).document as never).parse();
    }),
  },
  { name: 'link.process (guarded, summarized)', runFor: loop(() => media.processLinks({ text: url })) },
]);
printComparison('Link reading from a local server', links, {
  aims: { 'link.process (guarded, summarized)': { above: 1 / 1.2 } },
});
server.close();

const spoken = await media.synthesize({
  text: 'hello world this is a test of the speech system',
  format: 'opus',
});
const audio = (await readFile(spoken.absolutePath)).toString('base64');
const started = performance.now();
const transcript = await media.transcribe({ data: audio });
const rtf = (performance.now() - started) / transcript.durationMs;
printFigure('keyless transcription real-time factor', rtf, 'x', { below: 1 });
media.close();
