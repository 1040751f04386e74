import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { renderLavfi } from '../../../packages/media/src/internal/test-support.js';
import { eventually, rpcClient, startTestDaemon, type TestDaemon } from './helpers.js';

const PAGE = `<!doctype html><html lang="en"><head><title>Lighthouse keeping</title></head><body><article>
<h1>Lighthouse keeping</h1>
<p>Keeping a lighthouse meant trimming the wick, polishing the lens and winding the clockwork every night.</p>
<p>Keepers logged the weather, passing ships and every repair in a book the inspector read each quarter.</p>
<p>Automation ended the job in most countries by the end of the twentieth century, and the keepers left.</p>
</article></body></html>`;

describe('media namespaces over JSON-RPC', () => {
  let td: TestDaemon;
  let site: Awaited<ReturnType<typeof listenLocal>>;
  let origin: string;
  let rpc: ReturnType<typeof rpcClient>;

  beforeAll(async () => {
    site = await listenLocal((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
    origin = site.url;
    td = await startTestDaemon({
      config: {
        media: {
          links: { allowedHosts: [new URL(origin).host] },
          vision: { provider: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-plaintext-vision-key' } },
        },
      },
    });
    rpc = rpcClient(td.daemon.url);
  });
  afterAll(async () => {
    await td?.stop();
    await site.close();
  });

  it('speaks with espeak-ng into the workspace and transcribes it back, filling the voice block', async () => {
    const spoken = await rpc.call<{ path: string; mimeType: string; durationMs: number }>('tts.synthesize', {
      text: 'hello world this is a test of the speech system',
      channelType: 'telegram',
    });
    expect(spoken).toMatchObject({ mimeType: 'audio/ogg', engine: 'espeak-ng', keyless: true });
    expect(spoken).not.toHaveProperty('absolutePath');
    const file = join(td.dataDir, 'workspaces', 'default', spoken.path);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const transcript = await rpc.call<{ text: string; durationMs: number }>('audio.transcribe', {
      audio: (await readFile(file)).toString('base64'),
      sessionKey: 'voice-session-1',
    });
    expect(transcript.text.toLowerCase().split(' ')).toContain('world');
    expect(transcript.durationMs).toBeGreaterThan(1500);

    const report = await eventually(async () => {
      const found = await rpc.call<{ voice?: Record<string, unknown> }>('obs.explain', {
        sessionKey: 'voice-session-1',
      });
      return found.voice ? found : undefined;
    });
    expect(report.voice).toEqual({
      provider: 'pocketsphinx',
      keyless: true,
      durationMs: expect.any(Number),
      costUsd: 0,
      source: 'keyless-local',
      outcome: 'ok',
    });
  });

  it('answers {error} naming no_keyless_engine once the keyless engine is off, and the fleet sees it', async () => {
    await rpc.call('config.patch', { media: { stt: { order: 'keyed' } } });
    const spoken = await rpc.call<{ path: string }>('tts.synthesize', { text: 'one two three' });
    const audio = (await readFile(join(td.dataDir, 'workspaces', 'default', spoken.path))).toString('base64');
    const answer = await rpc.call<{ error?: string }>('audio.transcribe', {
      audio,
      sessionKey: 'voice-session-2',
    });
    expect(answer.error).toMatch(/^no_keyless_engine: .*apt-get install -y pocketsphinx pocketsphinx-en-us/);
    const fleet = await eventually(async () => {
      const health = await rpc.call<{ findings: Array<{ code: string; detail: string; count: number }> }>(
        'obs.fleet.health',
      );
      return health.findings.find((finding) => finding.code === 'voice_health');
    });
    expect(fleet).toMatchObject({ count: 1, detail: expect.stringContaining('no_keyless_engine') });
    await rpc.call('config.patch', { media: { stt: { order: 'auto' } } });
  });

  it('analyzes an image keylessly (tesseract OCR, image facts) from the workspace, saying what it is', async () => {
    await rpc.call('config.patch', { media: { vision: { order: 'keyless' } } });
    // ffmpeg draws the text with Debian's DejaVu font straight into the agent workspace.
    const font = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
    const draw = `drawtext=fontfile=${font}:text='Platform 9 closed':fontsize=48:fontcolor=black:x=30:y=70`;
    const picture = join(td.dataDir, 'workspaces', 'default', 'notice.png');
    renderLavfi(`color=c=white:s=600x200,${draw}`, ['-frames:v', '1'], picture);
    const answer = await rpc.call<{ description: string; engine: string; mimeType: string }>(
      'image.analyze',
      {
        path: 'notice.png',
      },
    );
    expect(answer).toMatchObject({ engine: 'tesseract', mimeType: 'image/png' });
    expect(answer.description).toMatch(/^Keyless local analysis .*does not recognise objects/);
    expect(answer.description.endsWith('Text read:\nPlatform 9 closed')).toBe(true);
    const test = await rpc.call('media.test.vision', { data: (await readFile(picture)).toString('base64') });
    expect(test).toMatchObject({ ok: true, engine: 'tesseract', result: { mimeType: 'image/png' } });
    const providers = await rpc.call<Record<string, Array<Record<string, unknown>>>>('media.providers');
    expect(providers.vision?.[1]).toMatchObject({ engine: 'tesseract', keyless: true, available: true });
    await rpc.call('config.patch', { media: { vision: { order: 'auto' } } });
  });

  it('refuses bad input with -32602 naming the field and writes nothing', async () => {
    const badBase64 = await rpc.fail('audio.transcribe', { audio: '%%%not base64%%%' });
    expect(badBase64.code).toBe(-32602);
    expect(JSON.stringify(badBase64.data)).toContain('"audio"');
    const notAudio = await rpc.fail('media.transcribe', {
      data: Buffer.from('plain words').toString('base64'),
    });
    expect(notAudio.code).toBe(-32602);
    expect(notAudio.message).toContain('not audio');
    const extra = await rpc.fail('tts.synthesize', { text: 'hi', agentId: '../escape' });
    expect(extra.code).toBe(-32602);
    expect(JSON.stringify(extra.data)).toContain('agentId');
  });

  it('extracts documents, reads links through the guard and reports providers without keys', async () => {
    const doc = await rpc.call('media.extract_document', {
      data: Buffer.from('# Notes\n\nBuy rope.').toString('base64'),
      mimeType: 'text/markdown',
    });
    expect(doc).toMatchObject({ text: '# Notes\n\nBuy rope.', truncated: false, mimeType: 'text/markdown' });

    const enriched = await rpc.call<{ text: string; links: Array<Record<string, unknown>> }>('link.process', {
      text: `read ${origin}/keepers`,
    });
    expect(enriched.links[0]).toMatchObject({
      ok: true,
      title: 'Lighthouse keeping',
      summarySource: 'extractive',
    });
    expect(enriched.text).toContain('Summary (extractive): ');
    const blocked = await rpc.call<{ links: Array<Record<string, unknown>> }>('link.process', {
      text: 'http://localhost:1/secret',
    });
    expect(blocked.links[0]).toMatchObject({ ok: false, code: 'BLOCKED_ADDRESS' });

    const providers = await rpc.call<Record<string, Array<Record<string, unknown>>>>('media.providers');
    expect(providers.stt).toContainEqual(
      expect.objectContaining({ engine: 'pocketsphinx', keyless: true, available: true }),
    );
    expect(providers.tts).toContainEqual(expect.objectContaining({ engine: 'espeak-ng', available: true }));
    expect(providers.vision?.[0]).toMatchObject({
      engine: 'openai',
      available: true,
      detail: 'http://127.0.0.1:9',
    });
    expect(JSON.stringify(providers)).not.toContain('sk-plaintext-vision-key');
    const section = await rpc.call<Record<string, unknown>>('config.read', { section: 'media' });
    expect(JSON.stringify(section)).not.toContain('sk-plaintext-vision-key');
    expect(JSON.stringify(section)).toContain('"apiKey":"[REDACTED]"');

    const test = await rpc.call('media.test.document', { data: Buffer.from('hello').toString('base64') });
    expect(test).toMatchObject({ ok: true, engine: 'text', result: { chars: 5 } });
    const video = await rpc.call('media.test.video', { data: Buffer.from('x').toString('base64') });
    expect(video).toMatchObject({ ok: false, code: 'NOT_CONFIGURED' });
    const describe = await rpc.fail('media.describe_video', { data: Buffer.from('x').toString('base64') });
    expect(describe.message).toMatch(/no video-capable vision provider is configured/);
    // Typed as a capability that is not configured, not an internal error.
    expect(describe).toMatchObject({ code: -32000, data: { code: 'NOT_CONFIGURED' } });
  });
});
