import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMediaError } from './errors.js';
import { renderLavfi } from './internal/test-support.js';
import { createMediaService } from './media-service.js';

const KEY = 'sk-test-key-123';
interface Seen {
  path: string;
  auth: string | undefined;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

let server: Server;
let baseUrl: string;
let seen: Seen[];
let status = 200;
let dir: string;

/** A 1x1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

beforeEach(async () => {
  seen = [];
  status = 200;
  dir = await mkdtemp(join(tmpdir(), 'media-keyed-'));
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({
      path: req.url ?? '',
      auth: req.headers.authorization,
      headers: req.headers,
      body: Buffer.concat(chunks),
    });
    if (status !== 200) return void res.writeHead(status).end('{"error":"nope"}');
    const json = (value: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.url === '/v1/chat/completions')
      json({ choices: [{ message: { role: 'assistant', content: 'A tiny red square.' } }] });
    else if (req.url === '/v1/messages') json({ content: [{ type: 'text', text: 'A single pixel.' }] });
    else if (req.url === '/v1/images/generations')
      json({ data: [{ b64_json: PNG.toString('base64'), revised_prompt: 'a cat, drawn' }] });
    else if (req.url === '/page')
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<title>P</title><p>Page text about harbours and tides.</p>');
    else if (req.url === '/v1/audio/transcriptions') json({ text: 'keyed transcript' });
    else if (req.url === '/v1/audio/speech')
      res.writeHead(200, { 'content-type': 'audio/mpeg' }).end(Buffer.from('ID3fake-mp3'));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const json = (entry: Seen | undefined) => JSON.parse(entry?.body.toString('utf8') ?? 'null');

describe('vision and image generation through OpenAI-compatible providers', () => {
  it('answers a clear not-configured error without a provider (and without the keyless engine)', async () => {
    const media = createMediaService({ section: { vision: { tesseractCommand: '/nowhere/tesseract' } } });
    await expect(media.analyzeImage({ image: PNG.toString('base64') })).rejects.toSatisfy(
      (error) => isMediaError(error, 'NOT_CONFIGURED') && /media\.vision\.provider/.test(error.message),
    );
    await expect(media.generateImage({ prompt: 'a cat' })).rejects.toSatisfy((error) =>
      isMediaError(error, 'NOT_CONFIGURED'),
    );
    await expect(media.describeVideo({ data: PNG.toString('base64') })).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'NOT_CONFIGURED') && /no video-capable vision provider/.test(error.message),
    );
    media.close();
  });

  it('sends the exact OpenAI chat request with the image as a data URI', async () => {
    const media = createMediaService({
      section: { vision: { provider: { baseUrl, apiKey: KEY, model: 'gpt-4o-mini' } } },
    });
    const answer = await media.analyzeImage({ image: `data:image/png;base64,${PNG.toString('base64')}` });
    expect(answer).toEqual({
      description: 'A tiny red square.',
      engine: 'openai',
      model: 'gpt-4o-mini',
      mimeType: 'image/png',
    });
    expect(seen[0]).toMatchObject({ path: '/v1/chat/completions', auth: `Bearer ${KEY}` });
    expect(json(seen[0])).toEqual({
      model: 'gpt-4o-mini',
      max_tokens: 1024,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Describe this image in detail' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
          ],
        },
      ],
    });
    media.close();
  });

  it('speaks the Anthropic messages format when configured so', async () => {
    const media = createMediaService({
      section: {
        vision: { provider: { id: 'claude', baseUrl, apiKey: KEY, model: 'claude-x', format: 'anthropic' } },
      },
    });
    const answer = await media.analyzeImage({ image: PNG.toString('base64'), prompt: 'What is it?' });
    expect(answer.description).toBe('A single pixel.');
    expect(seen[0]?.headers['x-api-key']).toBe(KEY);
    expect(seen[0]?.headers['anthropic-version']).toBe('2023-06-01');
    expect(json(seen[0]).messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
      { type: 'text', text: 'What is it?' },
    ]);
    media.close();
  });

  it('applies scope rules, refuses non-images and names auth failures without the key', async () => {
    const media = createMediaService({
      section: {
        vision: {
          provider: { baseUrl, apiKey: KEY },
          scopeRules: [{ channelType: 'slack', action: 'deny' }],
        },
      },
    });
    await expect(
      media.analyzeImage({ image: PNG.toString('base64'), channelType: 'slack' }),
    ).rejects.toSatisfy((error) => isMediaError(error, 'DENIED'));
    await expect(
      media.analyzeImage({
        image: PNG.toString('base64'),
        channelType: 'webchat',
        _callerChannelType: 'slack',
      }),
    ).rejects.toSatisfy((error) => isMediaError(error, 'DENIED'));
    await expect(
      media.analyzeImage({ image: Buffer.from('just text').toString('base64') }),
    ).rejects.toSatisfy((error) => isMediaError(error, 'UNSUPPORTED_TYPE') && error.data?.field === 'image');
    expect(seen).toEqual([]);
    status = 401;
    const failure = await media
      .analyzeImage({ image: PNG.toString('base64') })
      .catch((error: unknown) => error);
    expect(isMediaError(failure, 'PROVIDER_FAILED') && failure.data?.errorKind).toBe('auth_required');
    expect(String((failure as Error).message)).not.toContain(KEY);
    media.close();
  });

  it('generates images through /images/generations within maxPerHour per agent', async () => {
    const media = createMediaService({
      section: { imageGen: { provider: { baseUrl, apiKey: KEY, model: 'img-1' }, maxPerHour: 2 } },
    });
    const image = await media.generateImage({ prompt: 'a cat', agentId: 'ada' });
    expect(image).toMatchObject({
      mimeType: 'image/png',
      data: PNG.toString('base64'),
      revisedPrompt: 'a cat, drawn',
      model: 'img-1',
    });
    expect(json(seen[0])).toEqual({
      model: 'img-1',
      prompt: 'a cat',
      n: 1,
      size: '1024x1024',
      response_format: 'b64_json',
    });
    await media.generateImage({ prompt: 'a dog', agentId: 'ada' });
    await expect(media.generateImage({ prompt: 'a third', agentId: 'ada' })).rejects.toSatisfy((error) =>
      isMediaError(error, 'RATE_LIMITED'),
    );
    expect(seen).toHaveLength(2);
    await media.generateImage({ prompt: 'another agent', agentId: 'bob' });
    media.close();
  });
});

describe('keyed speech providers', () => {
  it('falls back to the keyed transcriber when the keyless engine is missing, as multipart', async () => {
    const events: Array<Record<string, unknown>> = [];
    const media = createMediaService({
      agentDir: (agentId) => join(dir, agentId),
      events: { emit: (_event, payload) => events.push(payload) },
      section: {
        stt: {
          pocketsphinxCommand: '/nonexistent/pocketsphinx_continuous',
          fallbacks: [{ id: 'groq', baseUrl, apiKey: KEY, model: 'whisper-large' }],
        },
      },
    });
    const ogg = await media.synthesize({ text: 'one two three', agentId: 'ada', format: 'opus' });
    const transcript = await media.transcribe({
      data: (await readFile(ogg.absolutePath)).toString('base64'),
      language: 'en',
    });
    expect(transcript).toMatchObject({ text: 'keyed transcript', engine: 'groq', keyless: false });
    const request = seen[0];
    expect(request).toMatchObject({ path: '/v1/audio/transcriptions', auth: `Bearer ${KEY}` });
    expect(request?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const body = request?.body.toString('latin1') ?? '';
    expect(body).toContain('name="model"\r\n\r\nwhisper-large');
    expect(body).toContain('name="language"\r\n\r\nen');
    expect(body).toContain('filename="speech.wav"');
    expect(events.filter((event) => event.operation === 'stt')).toEqual([
      expect.objectContaining({ provider: 'pocketsphinx', outcome: 'failed', errorKind: 'dependency' }),
      expect.objectContaining({
        provider: 'groq',
        keyless: false,
        source: 'fallback',
        outcome: 'ok',
        model: 'whisper-large',
      }),
    ]);
    media.close();
  });

  it('synthesizes through /audio/speech when a provider is configured', async () => {
    const media = createMediaService({
      agentDir: (agentId) => join(dir, agentId),
      section: { tts: { provider: { baseUrl, apiKey: KEY, model: 'tts-1' }, voice: 'alloy' } },
    });
    const spoken = await media.synthesize({ text: 'Hello [[tts:voice=nova]] there', agentId: 'ada' });
    expect(spoken).toMatchObject({ engine: 'openai', keyless: false, voice: 'nova', mimeType: 'audio/mpeg' });
    expect(json(seen[0])).toEqual({
      model: 'tts-1',
      input: 'Hello there',
      voice: 'nova',
      response_format: 'mp3',
    });
    expect(await readFile(spoken.absolutePath, 'utf8')).toBe('ID3fake-mp3');
    media.close();
  });
});

describe('MediaService.describeVideo', () => {
  it('sends frames of a real ffmpeg test video to the video-capable provider', async () => {
    const video = join(dir, 'clip.mp4');
    renderLavfi('testsrc=duration=2:size=160x120:rate=10', ['-pix_fmt', 'yuv420p'], video);
    const media = createMediaService({
      section: { vision: { provider: { baseUrl, apiKey: KEY }, videoCapable: true, videoFrames: 3 } },
    });
    const result = await media.describeVideo({ data: (await readFile(video)).toString('base64') });
    expect(result).toMatchObject({ description: 'A tiny red square.', frames: 3, mimeType: 'video/mp4' });
    expect(result.durationMs).toBeGreaterThanOrEqual(1900);
    const content = json(seen[0]).messages[0].content as Array<{
      type: string;
      text?: string;
      image_url?: { url: string };
    }>;
    expect(content[0]?.text).toMatch(/^Describe this video concisely\./);
    expect(
      content.filter((part) => part.type === 'image_url').map((part) => part.image_url?.url.slice(0, 23)),
    ).toEqual(['data:image/jpeg;base64,', 'data:image/jpeg;base64,', 'data:image/jpeg;base64,']);
    const report = await media.test.video({ data: Buffer.from('not a video at all').toString('base64') });
    expect(report).toMatchObject({ ok: false, code: 'UNSUPPORTED_TYPE' });
    media.close();
  });
});

describe('image delivery to the calling channel', () => {
  it('sends the image through the host hook when the caller channel is set, else returns base64', async () => {
    const sent: Array<{ target: unknown; data: string }> = [];
    const media = createMediaService({
      section: { imageGen: { provider: { baseUrl, apiKey: KEY } } },
      deliverImage: async (target, image) => {
        sent.push({ target, data: image.data });
        return { messageId: 'm-1' };
      },
    });
    const delivered = await media.generateImage({
      prompt: 'a boat',
      _callerChannelType: 'telegram',
      _callerChannelId: '42',
    });
    expect(delivered).toMatchObject({ delivered: true, messageId: 'm-1', mimeType: 'image/png' });
    expect(delivered).not.toHaveProperty('data');
    expect(sent).toEqual([
      { target: { channelType: 'telegram', channelId: '42' }, data: PNG.toString('base64') },
    ]);
    expect(await media.generateImage({ prompt: 'a boat' })).toMatchObject({ data: PNG.toString('base64') });
    media.close();
  });
});

describe('model link summaries', () => {
  it('asks the vision provider chat model for a summary when links.modelSummary is on, labelled model', async () => {
    const port = new URL(baseUrl).port;
    const media = createMediaService({
      section: {
        vision: { provider: { baseUrl, apiKey: KEY } },
        links: { allowedHosts: [`127.0.0.1:${port}`], modelSummary: true },
      },
    });
    const { links } = await media.processLinks({ text: `http://127.0.0.1:${port}/page` });
    expect(links[0]).toMatchObject({ ok: true, summary: 'A tiny red square.', summarySource: 'model' });
    const request = json(seen.find((entry) => entry.path === '/v1/chat/completions'));
    expect(request.messages[0].content).toEqual([
      { type: 'text', text: expect.stringContaining('Page text about harbours and tides.') },
    ]);
    media.applyConfig({
      vision: { provider: { baseUrl: 'http://127.0.0.1:9/v1' } },
      links: { allowedHosts: [`127.0.0.1:${port}`], modelSummary: true },
    });
    const fallback = await media.processLinks({ text: `http://127.0.0.1:${port}/page` });
    // The model failing is not the link failing: the extractive summary stands in, labelled so.
    expect(fallback.links[0]).toMatchObject({
      ok: true,
      summarySource: 'extractive',
      summary: expect.stringContaining('harbours'),
    });
    media.close();
  });
});
