import { Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { extractDocument } from './documents.js';
import { isMediaError } from './errors.js';
import { DOCX_CONTENT_TYPES as CONTENT_TYPES, zipOf as makeZip } from './internal/bomb-files.js';

async function makePdf(pages: string[]): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) pdf.addPage().drawText(text, { x: 50, y: 700, size: 14, font });
  return pdf.save();
}

async function makeDocx(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({
    sections: [{ children: paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })) }],
  });
  return Packer.toBuffer(doc);
}

/** A one-page PDF whose content stream says "Hello bomb" and then holds `padding` spaces, deflated. */
function bombPdf(padding: number): Buffer {
  const content = Buffer.concat([
    Buffer.from('BT /F1 12 Tf 72 712 Td (Hello bomb) Tj ET\n'),
    Buffer.alloc(padding, 0x20),
  ]);
  const stream = deflateSync(content, { level: 9 });
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let length = parts[0]?.length ?? 0;
  const add = (part: Buffer) => {
    offsets.push(length);
    parts.push(part);
    length += part.length;
  };
  add(Buffer.from('1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n'));
  add(Buffer.from('2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n'));
  add(
    Buffer.from(
      '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj\n',
    ),
  );
  add(
    Buffer.concat([
      Buffer.from(`4 0 obj << /Length ${stream.length} /Filter /FlateDecode >> stream\n`),
      stream,
      Buffer.from('\nendstream endobj\n'),
    ]),
  );
  add(Buffer.from('5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj\n'));
  const table = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  parts.push(
    Buffer.from(
      `xref\n0 6\n0000000000 65535 f \n${table}trailer << /Size 6 /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

describe('extractDocument', () => {
  it('reads a PDF with a deflated content stream, and refuses one inflating past 128 MiB', async () => {
    expect((await extractDocument(bombPdf(1000), { maxChars: 100 })).text).toBe('Hello bomb');
    const bomb = bombPdf(200 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(300_000);
    await expect(extractDocument(bomb, { maxChars: 100 })).rejects.toSatisfy(
      (error) => isMediaError(error, 'TOO_LARGE') && error.data?.maxBytes === 128 * 1024 * 1024,
    );
  });

  it('refuses DOCX zip bombs before mammoth inflates them', async () => {
    const zeros = Buffer.alloc(20 * 1024 * 1024);
    const lying = makeZip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES },
      { name: 'word/document.xml', data: zeros, declared: 1000 },
    ]);
    expect(lying.length).toBeLessThan(100_000);
    await expect(extractDocument(lying, { maxChars: 1000 })).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'CORRUPT_INPUT') && /inflates past its declared size/.test(error.message),
    );
    const honest = makeZip([
      { name: '[Content_Types].xml', data: CONTENT_TYPES },
      ...Array.from({ length: 7 }, (_, index) => ({ name: `word/media/${index}.bin`, data: zeros })),
    ]);
    await expect(extractDocument(honest, { maxChars: 1000, field: 'url' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'TOO_LARGE') && error.data?.field === 'url',
    );
  });

  it('reads every page of a PDF made by pdf-lib', async () => {
    const pdf = await makePdf(['Quarterly report for the lighthouse', 'Second page about tides']);
    const result = await extractDocument(pdf, { maxChars: 10_000 });
    expect(result.mimeType).toBe('application/pdf');
    expect(result.pages).toBe(2);
    expect(result.text).toContain('Quarterly report for the lighthouse');
    expect(result.text).toContain('Second page about tides');
    expect(result.truncated).toBe(false);
  });

  it('reads the paragraphs of a DOCX made by the docx library', async () => {
    const docx = await makeDocx(['Minutes of the harbour meeting', 'Action: repaint the buoys']);
    const result = await extractDocument(docx, { maxChars: 10_000 });
    expect(result.mimeType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(result.text).toBe('Minutes of the harbour meeting\n\nAction: repaint the buoys');
  });

  it('takes the visible text of HTML and decodes latin-1 text', async () => {
    const html = Buffer.from(
      '<!doctype html><html><head><style>p{}</style><script>var secret=1</script></head><body><h1>Title</h1><p>Body text</p></body></html>',
    );
    const page = await extractDocument(html, { maxChars: 1000 });
    expect(page.mimeType).toBe('text/html');
    expect(page.text).toBe('Title\nBody text');
    const latin1 = Buffer.from(
      'Caf\xe9 cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu, na\xefve r\xe9sum\xe9 for the gar\xe7on',
      'latin1',
    );
    expect((await extractDocument(latin1, { maxChars: 1000 })).text).toBe(
      'Café crème brûlée, déjà vu, naïve résumé for the garçon',
    );
  });

  it('cuts at the character limit and says so', async () => {
    const result = await extractDocument(Buffer.from('a'.repeat(500)), { maxChars: 100 });
    expect(result).toMatchObject({ truncated: true, totalChars: 500 });
    expect(result.text).toHaveLength(100);
  });

  it('refuses a corrupt PDF and a non-document with clear errors naming the field', async () => {
    const corrupt = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 0x41)]);
    await expect(extractDocument(corrupt, { maxChars: 100 })).rejects.toSatisfy(
      (error) => isMediaError(error, 'CORRUPT_INPUT') && error.data?.field === 'data',
    );
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    await expect(extractDocument(png, { maxChars: 100 })).rejects.toSatisfy(
      (error) => isMediaError(error, 'UNSUPPORTED_TYPE') && error.data?.detected === 'image/png',
    );
  });
});
