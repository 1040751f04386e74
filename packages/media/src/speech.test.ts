import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMediaError } from './errors.js';
import { createMediaService, type MediaService } from './media-service.js';
import { sniffMime } from './internal/sniff.js';
import { renderLavfi } from './internal/test-support.js';

const SENTENCE = 'hello world this is a test of the speech system';
const WORDS = ['hello', 'world', 'test', 'speech', 'system'];

let dir: string;
let media: MediaService;
let events: Array<{ event: string; payload: Record<string, unknown> }>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'media-speech-'));
  events = [];
  media = createMediaService({
    agentDir: (agentId) => join(dir, agentId),
    events: { emit: (event, payload) => events.push({ event, payload }) },
  });
});
afterEach(async () => {
  media.close();
  await rm(dir, { recursive: true, force: true });
});

/** Recognized words of the sentence: the keyless engine is loose, but must hear some. */
function heard(text: string): string[] {
  const said = new Set(text.toLowerCase().split(/\s+/));
  return WORDS.filter((word) => said.has(word));
}

describe('MediaService speech (espeak-ng, ffmpeg, pocketsphinx)', () => {
  it('speaks a sentence as an OGG/Opus voice note and transcribes it back with the keyless engine', async () => {
    const spoken = await media.synthesize({ text: SENTENCE, agentId: 'ada', channelType: 'telegram' });
    expect(spoken).toMatchObject({
      mimeType: 'audio/ogg',
      engine: 'espeak-ng',
      keyless: true,
      voice: 'en-us',
    });
    expect(spoken.path).toMatch(/^media\/tts\/tts-\d+-[0-9a-f]{8}\.ogg$/);
    expect(spoken.absolutePath).toBe(join(dir, 'ada', spoken.path));
    expect(spoken.durationMs).toBeGreaterThan(1500);
    expect((await stat(spoken.absolutePath)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'ada', 'media', 'tts'))).mode & 0o777).toBe(0o700);
    const voiceNote = await readFile(spoken.absolutePath);
    expect((await sniffMime(voiceNote)).mimeType).toBe('audio/ogg');

    const transcript = await media.transcribe(
      { data: voiceNote.toString('base64') },
      { sessionKey: 's1', agentId: 'ada' },
    );
    expect(transcript).toMatchObject({ engine: 'pocketsphinx', keyless: true, mimeType: 'audio/ogg' });
    expect(transcript.durationMs).toBeGreaterThan(1500);
    expect(heard(transcript.text).length).toBeGreaterThanOrEqual(2);
    expect(heard(transcript.text)).toContain('world');

    const turns = events.filter((entry) => entry.event === 'voice:turn').map((entry) => entry.payload);
    expect(turns).toEqual([
      expect.objectContaining({
        operation: 'tts',
        provider: 'espeak-ng',
        keyless: true,
        source: 'keyless-local',
        outcome: 'ok',
        agentId: 'ada',
      }),
      expect.objectContaining({
        operation: 'stt',
        provider: 'pocketsphinx',
        keyless: true,
        source: 'keyless-local',
        outcome: 'ok',
        sessionKey: 's1',
      }),
    ]);
    // Content-free evidence: neither the sentence nor the transcript is in it.
    expect(JSON.stringify(turns)).not.toMatch(/hello|world/);
  });

  it('writes MP3 for other channels and applies a [[tts:voice=…]] directive', async () => {
    const spoken = await media.synthesize({ text: '[[tts:voice=en-gb]] Good morning.', agentId: 'ada' });
    expect(spoken).toMatchObject({ mimeType: 'audio/mpeg', voice: 'en-gb' });
    expect((await sniffMime(await readFile(spoken.absolutePath))).mimeType).toBe('audio/mpeg');
  });

  it('transcribes an MP3 and a WAV as well as OGG (everything goes through ffmpeg)', async () => {
    const mp3 = await media.synthesize({ text: SENTENCE, agentId: 'ada', format: 'mp3' });
    const transcript = await media.transcribe({
      data: (await readFile(mp3.absolutePath)).toString('base64'),
    });
    expect(transcript.mimeType).toBe('audio/mpeg');
    expect(typeof transcript.text).toBe('string');
    expect(transcript.durationMs).toBeGreaterThan(1500);
  });

  it('refuses non-audio and corrupt audio with errors naming the field, and runs no engine', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex').toString('base64');
    await expect(media.transcribe({ data: png, field: 'audio' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'UNSUPPORTED_TYPE') && error.data?.field === 'audio',
    );
    const brokenOgg = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(300, 7)]).toString('base64');
    await expect(media.transcribe({ data: brokenOgg, field: 'audio' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'CORRUPT_INPUT') && error.data?.field === 'audio',
    );
    await expect(media.transcribe({ data: '***', field: 'audio' })).rejects.toSatisfy((error) =>
      isMediaError(error, 'INVALID_INPUT'),
    );
    expect(events).toEqual([]);
  });

  it('refuses audio longer than stt.maxSeconds before any engine runs (small files can hold hours)', async () => {
    const path = join(dir, 'long.ogg');
    renderLavfi('sine=frequency=440:sample_rate=16000:duration=14', ['-c:a', 'libopus', '-b:a', '6k'], path);
    media.applyConfig({ stt: { maxSeconds: 10 } });
    await expect(
      media.transcribe({ data: (await readFile(path)).toString('base64'), field: 'audio' }),
    ).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'TOO_LARGE') && error.data?.field === 'audio' && error.data?.maxSeconds === 10,
    );
    expect(events).toEqual([]);
  });

  it('answers no_keyless_engine when the keyless engine is off and no provider is set', async () => {
    media.applyConfig({ stt: { order: 'keyed' } });
    const ogg = await media.synthesize({ text: 'one two', agentId: 'ada', format: 'opus' });
    await expect(
      media.transcribe({ data: (await readFile(ogg.absolutePath)).toString('base64') }),
    ).rejects.toSatisfy(
      (error) => isMediaError(error, 'NOT_CONFIGURED') && /no_keyless_engine/.test(error.message),
    );
    expect(events.at(-1)?.payload).toMatchObject({ outcome: 'failed', errorKind: 'no_keyless_engine' });
  });

  it('names the Debian package when an engine is not installed', async () => {
    media.applyConfig({ tts: { espeakCommand: 'espeak-ng-not-here' } });
    await expect(media.synthesize({ text: 'hi there', agentId: 'ada' })).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'ENGINE_MISSING') && /espeak-ng-not-here is not installed/.test(error.message),
    );
    media.applyConfig({
      tts: { espeakCommand: 'espeak-ng' },
      stt: { pocketsphinxCommand: '/nonexistent/pocketsphinx_continuous' },
    });
    const ogg = await media.synthesize({ text: 'one two', agentId: 'ada' });
    await expect(
      media.transcribe({ data: (await readFile(ogg.absolutePath)).toString('base64') }),
    ).rejects.toSatisfy(
      (error) =>
        isMediaError(error, 'ENGINE_MISSING') &&
        /apt-get install -y pocketsphinx pocketsphinx-en-us/.test(error.message),
    );
    expect(events.at(-1)?.payload).toMatchObject({
      operation: 'stt',
      outcome: 'failed',
      errorKind: 'dependency',
    });
  });

  it('sweeps synthesized files older than an hour', async () => {
    const spoken = await media.synthesize({ text: 'keep me', agentId: 'ada' });
    const old = join(dir, 'ada', 'media', 'tts', 'tts-1-deadbeef.mp3');
    await writeFile(old, 'x');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    await utimes(old, twoHoursAgo, twoHoursAgo);
    expect(await media.sweep()).toBe(1);
    await expect(stat(old)).rejects.toThrow();
    expect((await stat(spoken.absolutePath)).isFile()).toBe(true);
  });

  it('decides auto speech by tts.autoMode and strips directives', () => {
    media.applyConfig({ tts: { autoMode: 'voice_reply' } });
    expect(media.autoCheck({ text: '[[tts:voice=en-gb]] Hi!', inboundAudio: true })).toEqual({
      shouldSynthesize: true,
      mode: 'voice_reply',
      strippedText: 'Hi!',
      voice: 'en-gb',
    });
    expect(media.autoCheck({ text: 'Hi!' })).toMatchObject({ shouldSynthesize: false, mode: 'voice_reply' });
    media.applyConfig({ tts: { autoMode: 'always' } });
    expect(media.autoCheck({ text: '[[tts:voice=x]]' })).toMatchObject({
      shouldSynthesize: false,
      strippedText: '',
    });
  });
});

describe('MediaService speech errors', () => {
  it('refuses an unknown espeak-ng voice as the caller mistake it is', async () => {
    const local = createMediaService({ agentDir: (agentId) => join(tmpdir(), 'media-voice-test', agentId) });
    await expect(local.synthesize({ text: 'hello', voice: 'nosuchvoice' })).rejects.toSatisfy(
      (error) => isMediaError(error, 'INVALID_INPUT') && error.data?.field === 'voice',
    );
    local.close();
  });
});
