import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMediaError } from './errors.js';
import { createMediaService, type MediaService } from './media-service.js';
import { readConfinedFile } from './workspace-reader.js';

let dir: string;
let media: MediaService;
let server: Server;
let port: number;
let transcriptions = 0;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'media-service-'));
  server = createServer((req, res) => {
    if (req.url === '/v1/audio/transcriptions') {
      transcriptions += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"from the main key"}');
    } else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<title>Probe</title><p>Probe page body text.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  media = createMediaService({
    agentDir: (agentId) => join(dir, 'workspaces', agentId),
    readWorkspaceFile: readConfinedFile((agentId) => join(dir, 'workspaces', agentId)),
    section: { links: { allowedHosts: [`127.0.0.1:${port}`] } },
  });
});
afterEach(async () => {
  media.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('MediaService.test', () => {
  it('runs real round trips and reports engine, duration and outcome', async () => {
    const tts = await media.test.tts({});
    expect(tts).toMatchObject({ ok: true, engine: 'espeak-ng', result: { mimeType: 'audio/mpeg' } });
    const stt = await media.test.stt({ data: Buffer.from('plain text, no audio').toString('base64') });
    expect(stt).toMatchObject({ ok: false, code: 'UNSUPPORTED_TYPE' });
    const link = await media.test.link({ url: `http://127.0.0.1:${port}/probe` });
    expect(link).toMatchObject({ ok: true, engine: 'readability', result: { links: [{ title: 'Probe' }] } });
    const fromText = await media.test.link({
      data: Buffer.from(`see http://127.0.0.1:${port}/x`).toString('base64'),
    });
    expect(fromText.ok).toBe(true);
    const vision = await media.test.vision({ data: Buffer.from('x').toString('base64') });
    expect(vision).toMatchObject({ ok: false });
    for (const report of [tts, stt, link, vision]) expect(report.durationMs).toBeGreaterThanOrEqual(0);
    await expect(media.test.document({ data: '!!' })).rejects.toSatisfy((error) =>
      isMediaError(error, 'INVALID_INPUT'),
    );
  });

  it('lists providers with keyless engines found and keys never shown', async () => {
    media.applyConfig({
      imageGen: { provider: { baseUrl: 'https://images.example/v1', apiKey: 'sk-secret-value' } },
    });
    const report = await media.providers();
    expect(report.stt).toContainEqual({ engine: 'pocketsphinx', keyless: true, available: true });
    expect(report.tts).toContainEqual({ engine: 'espeak-ng', keyless: true, available: true });
    expect(report.imageGen).toEqual([
      { engine: 'openai', keyless: false, available: true, detail: 'https://images.example' },
    ]);
    expect(report.video[0]).toMatchObject({
      available: false,
      detail: expect.stringContaining('videoCapable'),
    });
    expect(JSON.stringify(report)).not.toContain('sk-secret-value');
    media.applyConfig({ stt: { pocketsphinxCommand: '/nowhere/pocketsphinx_continuous' } });
    expect((await media.providers()).stt[0]).toMatchObject({
      available: false,
      detail: 'not installed: apt-get install -y pocketsphinx pocketsphinx-en-us',
    });
  });

  it('refuses input over media.maxInputBytes before decoding it, naming the field', async () => {
    media.applyConfig({ maxInputBytes: 1024 });
    const big = Buffer.alloc(2048, 1).toString('base64');
    await expect(media.extractDocument({ data: big })).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'TOO_LARGE') && error.data?.field === 'data' && error.data?.maxBytes === 1024,
    );
    await expect(media.transcribe({ data: big, field: 'audio' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'TOO_LARGE') && error.data?.field === 'audio',
    );
  });

  it('refuses an invalid section and keeps the previous one', () => {
    expect(() => media.applyConfig({ tts: { autoMode: 'sometimes' } })).toThrow(/tts\.autoMode/);
    expect(media.autoCheck({ text: 'hi' }).mode).toBe('never');
  });

  it('follows the main provider key when asked to, after the keyless engine', async () => {
    const events: Array<Record<string, unknown>> = [];
    const local = createMediaService({
      agentDir: (agentId) => join(dir, 'w', agentId),
      mainProvider: () => ({ id: 'main', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'k' }),
      events: { emit: (_event, payload) => events.push(payload) },
      section: { stt: { followMainKey: true, pocketsphinxCommand: '/nowhere/pocketsphinx_continuous' } },
    });
    const spoken = await local.synthesize({ text: 'testing one two', format: 'opus' });
    const { readFile } = await import('node:fs/promises');
    const transcript = await local.transcribe({
      data: (await readFile(spoken.absolutePath)).toString('base64'),
    });
    expect(transcript).toMatchObject({ text: 'from the main key', engine: 'main', keyless: false });
    expect(transcriptions).toBe(1);
    expect(events.at(-1)).toMatchObject({ provider: 'main', source: 'follow-main-key', outcome: 'ok' });
    local.close();
  });
});

describe('readConfinedFile', () => {
  it('reads inside the agent workspace and refuses escapes', async () => {
    const root = join(dir, 'workspaces', 'ada');
    await mkdir(join(root, 'img'), { recursive: true });
    await writeFile(join(root, 'img', 'a.txt'), 'inside');
    await writeFile(join(dir, 'outside.txt'), 'outside');
    await symlink(join(dir, 'outside.txt'), join(root, 'link.txt'));
    const read = readConfinedFile((agentId) => join(dir, 'workspaces', agentId));
    expect((await read('ada', 'img/a.txt')).toString()).toBe('inside');
    for (const path of ['../outside.txt', '/etc/passwd', 'link.txt', 'missing.png', '.'])
      await expect(read('ada', path)).rejects.toSatisfy(
        (error) => isMediaError(error, 'INVALID_INPUT') && error.data?.field === 'path',
      );
  });

  it('refuses FIFOs, directories and oversize files without blocking or reading them', async () => {
    const root = join(dir, 'workspaces', 'ada');
    await mkdir(join(root, 'sub'), { recursive: true });
    // A FIFO with no writer: a blocking open would park a thread of libuv's pool for good.
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await writeFile(join(root, 'big.bin'), '');
    await truncate(join(root, 'big.bin'), 64 * 1024 * 1024);
    const read = readConfinedFile((agentId) => join(dir, 'workspaces', agentId));
    for (const path of ['pipe', 'sub'])
      await expect(read('ada', path)).rejects.toSatisfy(
        (error) => isMediaError(error, 'INVALID_INPUT') && /regular file/.test(error.message),
      );
    await expect(read('ada', 'big.bin', 1024)).rejects.toSatisfy(
      (error) => isMediaError(error, 'TOO_LARGE') && error.data?.maxBytes === 1024,
    );
    media.applyConfig({ maxInputBytes: 4096 });
    await mkdir(join(dir, 'workspaces', 'default'), { recursive: true });
    await writeFile(join(dir, 'workspaces', 'default', 'big.png'), Buffer.alloc(8192, 1));
    await expect(media.analyzeImage({ path: 'big.png' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'TOO_LARGE') && error.data?.field === 'path',
    );
  });

  it('feeds image.analyze by workspace path (and the type check still applies)', async () => {
    const root = join(dir, 'workspaces', 'default');
    await mkdir(root, { recursive: true });
    await writeFile(join(root, 'notes.txt'), 'not an image');
    await expect(media.analyzeImage({ path: 'notes.txt' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'UNSUPPORTED_TYPE') && error.data?.field === 'path',
    );
  });
});

describe('createMediaTools', () => {
  it('gives agents the six media tools, run as the calling agent', async () => {
    const { createMediaTools } = await import('./tools.js');
    const tools = createMediaTools(media);
    expect(tools.map((tool) => tool.name)).toEqual([
      'media_transcribe',
      'media_speak',
      'media_analyze_image',
      'media_generate_image',
      'media_read_document',
      'media_read_link',
    ]);
    const context = { agentId: 'ada', sessionKey: 'tool-session', signal: new AbortController().signal };
    const speak = tools.find((tool) => tool.name === 'media_speak');
    const spoken = (await speak?.handler(speak.params.parse({ text: 'from a tool' }), context)) as {
      path: string;
      absolutePath: string;
    };
    expect(spoken.absolutePath).toBe(join(dir, 'workspaces', 'ada', spoken.path));
    const read = tools.find((tool) => tool.name === 'media_read_document');
    expect(await read?.handler({ data: Buffer.from('tool text').toString('base64') }, context)).toMatchObject(
      { text: 'tool text' },
    );
    expect(() => speak?.params.parse({ text: 'x', agentId: 'other' })).toThrow();
  });
});
