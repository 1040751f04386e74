import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { extractDocument } from './documents.js';
import { isMediaError } from './errors.js';
import { checkPdf } from './internal/pdf-guard.js';
import {
  arrayBufferRise,
  DOCX_CONTENT_TYPES,
  lzwLiteral,
  lenientOnlyZlib,
  lzwZeros,
  nestedFlate,
  pagePdf,
  pdfOf,
  showText,
  zerosDeflate,
  zerosZlib,
  zipOf,
} from './internal/bomb-files.js';

const MiB = 1024 * 1024;

/** The error extractDocument answers (fails the test when it answers text). */
async function refusal(
  bytes: Buffer,
): Promise<{ code: string; message: string; data?: Record<string, unknown> }> {
  const error = await extractDocument(bytes, { maxChars: 1000 }).then(
    (result) => new Error(`expected a refusal, got ${JSON.stringify(result).slice(0, 200)}`),
    (thrown: unknown) => thrown,
  );
  if (!isMediaError(error)) throw error;
  return error as never;
}

const tooLarge = { code: 'TOO_LARGE', data: { field: 'data', maxBytes: 128 * MiB } };

describe('PDF decompression bombs', () => {
  it('refuses a 5 KB page stream filtered [/FlateDecode /FlateDecode] that inflates to 2 GiB, in little memory', async () => {
    const bomb = pagePdf('/Filter [/FlateDecode /FlateDecode]', nestedFlate(2048));
    expect(bomb.length).toBeLessThan(8192);
    let error: unknown;
    const rise = await arrayBufferRise(async () => {
      error = await refusal(bomb);
    });
    expect(error).toMatchObject(tooLarge);
    expect((error as Error).message).toBe('data is a PDF whose streams decode past 134217728 bytes');
    // Streamed and counted: never the 128 MiB budget itself, let alone the 2 GiB.
    expect(rise).toBeLessThan(64 * MiB);
  }, 30_000);

  it('follows every spelling of the chain pdf.js reads', async () => {
    const data = nestedFlate(200);
    const hex = Buffer.from(`${data.toString('hex')}>`);
    for (const bomb of [
      // Hex-wrapped, the name escaped, a comment between the dictionary and `stream`.
      pagePdf('/Filter [/ASCIIHexDecode /FlateDecode /FlateDecode]', hex),
      pagePdf('/Filter [/Fl#61teDecode /Fl]', data),

      // The filter array given by reference, the way `/F` (pdf.js reads it first) is.
      pagePdf('/Filter 6 0 R', data, ['[/FlateDecode /FlateDecode]']),
      pagePdf('/F [/FlateDecode /FlateDecode]', data),
      Buffer.from(
        pagePdf('/Filter [/FlateDecode /FlateDecode]', data)
          .toString('latin1')
          .replace('>> stream', '>> % a note\nstream'),
        'latin1',
      ),
    ]) {
      expect(await refusal(bomb), bomb.subarray(9, 400).toString('latin1')).toMatchObject(tooLarge);
    }
  }, 60_000);

  it('reads past an `endstream` inside the data when /Length says the stream goes on', async () => {
    // A stored deflate block holding the word, then 200 MiB of zeros: a guard that stops at
    // the first `endstream` sees 9 bytes.
    const word = Buffer.from('endstream');
    const stored = Buffer.concat([Buffer.from([0x00, word.length, 0x00, ~word.length & 0xff, 0xff]), word]);
    const zeros = zerosZlib(200);
    const data = Buffer.concat([zeros.subarray(0, 2), stored, zeros.subarray(2)]);
    expect(await refusal(pagePdf('/Filter /FlateDecode', data))).toMatchObject(tooLarge);
  }, 30_000);

  it('counts what a Flate stream made before its checksum fails (pdf.js never checks it)', async () => {
    const data = zerosZlib(200);
    data[data.length - 1] = (data.at(-1) ?? 0) ^ 0xff;
    expect(await refusal(pagePdf('/Filter /FlateDecode', data))).toMatchObject(tooLarge);
  }, 30_000);

  it('hands over undecoded a Flate stream zlib refuses and pdf.js reads leniently', async () => {
    const lenient = pagePdf('/Filter /FlateDecode', lenientOnlyZlib(2048));
    expect(lenient.length).toBeLessThan(4 * MiB);
    let read: unknown;
    const rise = await arrayBufferRise(async () => {
      read = await extractDocument(lenient, { maxChars: 100 });
    });
    expect(read).toMatchObject({ pages: 1 });
    expect(rise).toBeLessThan(64 * MiB);
  }, 30_000);

  it('hands over undecoded a stream whose filter is a reference the file does not define at top level', async () => {
    // Object 8, the filter array, lives only inside object 6, an object stream.
    const objects = deflateSync(Buffer.from('8 0 [/FlateDecode /FlateDecode]'));
    const hidden = pagePdf('/Filter 8 0 R', nestedFlate(2048), [
      {
        dict: `<< /Type /ObjStm /N 1 /First 4 /Length ${objects.length} /Filter /FlateDecode >>`,
        data: objects,
      },
    ]);
    const checked = Buffer.from(await checkPdf(hidden, 'data')).toString('latin1');
    expect(checked).not.toContain('/Filter 8 0 R');
    expect(checked).toContain('/XXXXXX 8 0 R');
  });

  it('refuses LZW and RunLength bombs, alone and chained', async () => {
    const lzw = lzwZeros(40_000);
    expect(lzw.length).toBeLessThan(70_000);
    expect(await refusal(pagePdf('/Filter /LZWDecode', lzw))).toMatchObject(tooLarge);
    // RunLength repeats a byte 128 times per 2 bytes; deflated, those pairs are nothing.
    const runs = Buffer.alloc(4 * MiB, Buffer.from([0x81, 0x20]));
    const rl = deflateSync(runs, { level: 9 });
    expect(await refusal(pagePdf('/Filter [/FlateDecode /RunLengthDecode]', rl))).toMatchObject(tooLarge);
  }, 30_000);

  it('hands an image-labelled or image-codec stream to pdf.js undecoded, so it cannot inflate', async () => {
    // Marked as an image but used as the page's content: pdf.js would inflate it in full.
    const asImage = pagePdf('/Subtype /Image /Filter [/FlateDecode /FlateDecode]', nestedFlate(2048));
    let read: unknown;
    const rise = await arrayBufferRise(async () => {
      read = await extractDocument(asImage, { maxChars: 100 });
    });
    expect(read).toMatchObject({ pages: 1, truncated: false });
    expect(rise).toBeLessThan(64 * MiB);
    const jpeg = pagePdf('/Filter /DCTDecode', Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, 0xff, 0xff]));
    expect(await extractDocument(jpeg, { maxChars: 100 })).toMatchObject({ pages: 1 });
  }, 30_000);

  it('refuses a stream nested in a decoded object stream, and encrypted PDFs', async () => {
    const inner = `<< /Length 10 /Filter [/FlateDecode /FlateDecode] >>\nstream\n`;
    const objects = deflateSync(Buffer.from(`6 0 ${inner}0123456789\nendstream`));
    const nested = pagePdf('/Filter /FlateDecode', deflateSync(showText('x')), [
      {
        dict: `<< /Type /ObjStm /N 1 /First 4 /Length ${objects.length} /Filter /FlateDecode >>`,
        data: objects,
      },
    ]);
    expect(await refusal(nested)).toMatchObject({
      code: 'CORRUPT_INPUT',
      message: 'data is a PDF that could not be checked: a stream nested inside a decoded stream',
    });
    const encrypted = pagePdf(
      '',
      showText('secret'),
      ['<< /Filter /Standard /V 1 /R 2 >>'],
      '/Encrypt 6 0 R ',
    );
    expect(await refusal(encrypted)).toMatchObject({ code: 'UNSUPPORTED_TYPE' });
  });

  it('stays linear on hostile syntax: comment runs after `>>`, thousands of streams that never end', async () => {
    // A comment that could end anywhere made the stream search backtrack exponentially.
    const comments = pagePdf('', Buffer.from(`BT (x) Tj ET ${'>>'}${'%'.repeat(64)} x`));
    expect(await extractDocument(comments, { maxChars: 10 })).toMatchObject({ pages: 1 });
    // No `endstream` anywhere: every ASCII85 stream would be read to the end of the file.
    const endless = Buffer.from(
      `%PDF-1.7\n${Array.from({ length: 20_000 }, (_, i) => `${i + 1} 0 obj << /Filter /A85 >> stream\n`).join('')}`,
    );
    expect(await refusal(endless)).toMatchObject({
      code: 'TOO_LARGE',
      message: 'data is a PDF whose streams do not end (their data was read past twice the file)',
    });
  }, 30_000);

  it('still reads text through every filter it checks', async () => {
    const text = showText('Hello chain');
    for (const [dict, data] of [
      ['/Filter [/ASCIIHexDecode /FlateDecode]', Buffer.from(`${deflateSync(text).toString('hex')}>`)],
      ['/Filter /LZWDecode', lzwLiteral(text)],
      ['/Filter [/FlateDecode /FlateDecode]', deflateSync(deflateSync(text))],
      ['/Filter /RunLengthDecode', Buffer.concat([Buffer.from([text.length - 1]), text, Buffer.from([128])])],
    ] as const) {
      expect((await extractDocument(pagePdf(dict, data), { maxChars: 100 })).text, dict).toBe('Hello chain');
    }
    expect(
      (await extractDocument(pdfOf(['<< >>']), { maxChars: 10 }).catch((e: Error) => e)) instanceof Error,
    ).toBe(true);
  });
});

describe('DOCX decompression bombs', () => {
  it('checks the entries the end record does not count: JSZip reads every central header', async () => {
    // The end record lists two entries; a third, JSZip's `word/document.xml` (the later of
    // two wins), declares 13 bytes and inflates to 1 GiB.
    const hidden = zipOf(
      [
        { name: '[Content_Types].xml', data: DOCX_CONTENT_TYPES },
        { name: 'word/document.xml', data: Buffer.from('<w:document/>') },
        { name: 'word/document.xml', data: Buffer.alloc(0), declared: 13, packed: zerosDeflate(1024) },
      ],
      2,
    );
    expect(hidden.length).toBeLessThan(2 * MiB);
    let error: unknown;
    const rise = await arrayBufferRise(async () => {
      error = await refusal(hidden);
    });
    expect(error).toMatchObject({ code: 'CORRUPT_INPUT', data: { field: 'data' } });
    expect((error as Error).message).toMatch(/inflates past its declared size/);
    expect(rise).toBeLessThan(64 * MiB);
  }, 30_000);
});
