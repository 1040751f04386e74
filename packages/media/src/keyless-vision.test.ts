import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMediaError } from './errors.js';
import { colourName } from './internal/image-facts.js';
import { renderLavfi } from './internal/test-support.js';
import { createMediaService, type MediaService } from './media-service.js';

// Real engines: ffmpeg draws the pictures (drawtext with Debian's DejaVu font), tesseract reads them.
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
let dir: string;
let media: MediaService;

/** A picture of `text` drawn in black on `background` (an ffmpeg colour, `black@0` for transparent). */
async function textPicture(name: string, text: string, background = 'white', pixFmt = 'rgb24') {
  const path = join(dir, name);
  const draw = `drawtext=fontfile=${FONT}:text='${text}':fontsize=48:fontcolor=black:x=40:y=70`;
  renderLavfi(
    `color=c=${background}:s=640x200,format=rgba,${draw}`,
    ['-frames:v', '1', '-pix_fmt', pixFmt],
    path,
  );
  return (await readFile(path)).toString('base64');
}

/** A PNG header declaring `side`×`side` grey pixels whose rows deflate to almost nothing. */
function hugePng(side: number): string {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 8; // bit depth; colour type 0 (grey), no interlace
  const rows = deflateSync(Buffer.alloc((side + 1) * 64, 0));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', rows),
    chunk('IEND', Buffer.alloc(0)),
  ]).toString('base64');
}

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'media-keyless-vision-'));
  media = createMediaService();
});
afterAll(async () => {
  media.close();
  await rm(dir, { recursive: true, force: true });
});

describe('keyless vision (tesseract OCR and ffmpeg image facts)', () => {
  it('reads the text of a picture and says what the engine is when no provider is configured', async () => {
    const answer = await media.analyzeImage({ image: await textPicture('invoice.png', 'Invoice 4711 paid') });
    expect(answer.engine).toBe('tesseract');
    expect(answer.mimeType).toBe('image/png');
    expect(Object.keys(answer).sort()).toEqual(['description', 'engine', 'mimeType']);
    const [preamble, image, kind, heading, words] = answer.description.split('\n');
    expect(preamble).toMatch(
      /^Keyless local analysis .*no vision model answered.*does not recognise objects/,
    );
    expect(image).toMatch(/^Image: image\/png, 640×200 px png, no transparency; light/);
    expect(image).toContain('white');
    expect(kind).toMatch(/^(Mostly|Some) text: 3 words/);
    expect(heading).toBe('Text read:');
    expect(words).toBe('Invoice 4711 paid');
  });

  it('lays transparent pictures over white, so dark text on transparency is read', async () => {
    const image = await textPicture('sign.png', 'Harbour Road', 'black@0', 'rgba');
    const answer = await media.analyzeImage({ image, prompt: 'Is there a boat?' });
    expect(answer.description).toContain('with transparency');
    expect(answer.description).toContain(
      'The prompt was not interpreted: this engine cannot answer questions about a picture.',
    );
    expect(answer.description.split('\n').at(-1)).toBe('Harbour Road');
  });

  it('reports colours of a picture without text, and names basic colours', async () => {
    const path = join(dir, 'flag.png');
    renderLavfi(
      'color=c=red:s=300x200',
      ['-vf', 'drawbox=x=150:y=0:w=150:h=200:c=blue:t=fill', '-frames:v', '1'],
      path,
    );
    const report = await media.test.vision({ data: (await readFile(path)).toString('base64') });
    expect(report).toMatchObject({ ok: true, engine: 'tesseract' });
    const description = String(report.result?.description);
    expect(description).toMatch(/main colours: (red 50%, blue 50%|blue 50%, red 50%)/);
    expect(description).toContain('No readable text found.');
    expect([colourName(255, 255, 255), colourName(0, 0, 0), colourName(128, 128, 128)]).toEqual([
      'white',
      'black',
      'grey',
    ]);
    expect([colourName(250, 220, 30), colourName(30, 160, 60), colourName(140, 60, 200)]).toEqual([
      'yellow',
      'green',
      'purple',
    ]);
  });

  it('refuses corrupt pictures and decompression bombs before decoding them', async () => {
    const png = Buffer.from(await textPicture('cut.png', 'cut'), 'base64');
    await expect(media.analyzeImage({ image: png.subarray(0, 60).toString('base64') })).rejects.toSatisfy(
      (error) => isMediaError(error, 'CORRUPT_INPUT') && error.data?.field === 'image',
    );
    const started = Date.now();
    for (const side of [8000, 20_000])
      await expect(media.analyzeImage({ image: hugePng(side) })).rejects.toSatisfy(
        (error) => isMediaError(error, 'TOO_LARGE') && error.data?.maxPixels === 40_000_000,
      );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('lists the engine in media.providers, with what to install when parts are missing', async () => {
    const report = await media.providers();
    expect(report.vision[0]).toEqual({
      engine: 'tesseract',
      keyless: true,
      available: true,
      detail: 'reads text (OCR, eng) and image facts; does not recognise objects',
    });
    expect(report.video[1]).toMatchObject({ engine: 'tesseract-frames', available: false });
    const other = createMediaService({ section: { vision: { ocrLanguage: 'eng+zzz' } } });
    expect((await other.providers()).vision[0]).toMatchObject({
      available: false,
      detail: 'not installed: apt-get install -y tesseract-ocr-zzz',
    });
    other.close();
  });

  it('answers clear errors when an engine, a language or every engine is missing', async () => {
    const image = await textPicture('err.png', 'error');
    const none = createMediaService({ section: { vision: { tesseractCommand: '/nowhere/tesseract' } } });
    await expect(none.analyzeImage({ image })).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'NOT_CONFIGURED') &&
        error.message.includes('set media.vision.provider') &&
        error.message.includes('apt-get install -y tesseract-ocr tesseract-ocr-eng ffmpeg'),
    );
    none.applyConfig({ vision: { tesseractCommand: '/nowhere/tesseract', order: 'keyless' } });
    await expect(none.analyzeImage({ image })).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'ENGINE_MISSING') && /tesseract-ocr tesseract-ocr-eng/.test(error.message),
    );
    none.applyConfig({ vision: { ocrLanguage: 'zzz', order: 'keyless' } });
    await expect(none.analyzeImage({ image })).rejects.toSatisfy(
      (error) => isMediaError(error, 'ENGINE_MISSING') && error.data?.package === 'tesseract-ocr-zzz',
    );
    none.applyConfig({ vision: { order: 'keyed' } });
    await expect(none.analyzeImage({ image })).rejects.toSatisfy(
      (error) => isMediaError(error, 'NOT_CONFIGURED') && !error.message.includes('tesseract'),
    );
    expect(() => none.applyConfig({ vision: { ocrLanguage: '-l eng' } })).toThrow(/ocrLanguage/);
    none.close();
  });

  it('describes a video from the text and facts of its frames when keylessVideo is on', async () => {
    const path = join(dir, 'titles.mp4');
    const draw = `drawtext=fontfile=${FONT}:text='Chapter Seven':fontsize=40:fontcolor=black:x=30:y=100`;
    renderLavfi(`color=c=white:s=480x240:d=2:r=10,${draw}`, ['-pix_fmt', 'yuv420p'], path);
    const data = (await readFile(path)).toString('base64');
    await expect(media.describeVideo({ data })).rejects.toSatisfy((error) =>
      isMediaError(error, 'NOT_CONFIGURED'),
    );
    const video = createMediaService({ section: { vision: { keylessVideo: true, videoFrames: 2 } } });
    const answer = await video.describeVideo({ data });
    expect(answer).toMatchObject({ engine: 'tesseract', frames: 2, mimeType: 'video/mp4' });
    expect(answer.description).toMatch(/^Keyless local analysis/);
    expect(answer.description).toContain('Video: 2 frames read, 2.0 s long.');
    expect(answer.description).toMatch(/Frame 2: 480×240 px mjpeg/);
    expect(answer.description.endsWith('Text read across the frames:\nChapter Seven')).toBe(true);
    expect((await video.providers()).video[1]).toMatchObject({ engine: 'tesseract-frames', available: true });
    // A 10 KB video of 6500×6200 frames: refused by the pixel cap, not decoded. Rendering it takes
    // ffmpeg some 14 s of CPU, so it is kept as a file (made by `ffmpeg -f lavfi -i
    // color=c=gray:s=6500x6200:d=1:r=1 -c:v ffv1 huge-6500x6200.mkv`).
    const huge = join(import.meta.dirname, '..', 'fixtures', 'huge-6500x6200.mkv');
    await expect(video.describeVideo({ data: (await readFile(huge)).toString('base64') })).rejects.toSatisfy(
      (error) => isMediaError(error, 'TOO_LARGE') && error.data?.maxPixels === 40_000_000,
    );
    video.close();
  });
});
