import { commandExists, POCKETSPHINX_MODEL, readable } from './internal/engines.js';
import type { MediaContext } from './internal/context.js';
import { keylessVisionEntry } from './keyless-vision.js';

/** One engine of a capability as `media.providers` lists it. */
export interface EngineEntry {
  engine: string;
  keyless: boolean;
  /** Keyless: the program (and model) was found. Keyed: a provider is configured. */
  available: boolean;
  /** What is missing, or where it points (a base URL, never a key). */
  detail?: string | undefined;
  model?: string | undefined;
}

/** Each capability's engines. */
export type ProvidersReport = Record<
  'stt' | 'tts' | 'vision' | 'imageGen' | 'documents' | 'video' | 'links',
  EngineEntry[]
>;

/** What engines each capability has right now (programs looked up in PATH, keys never shown). */
export async function listProviders(context: MediaContext): Promise<ProvidersReport> {
  const section = context.section();
  const has = (command: string) => commandExists(command, context.env);
  const ffmpeg = await has(section.ffmpegCommand);
  const keyed = (id: string, baseUrl: string, model?: string): EngineEntry => ({
    engine: id,
    keyless: false,
    available: true,
    detail: new URL(baseUrl).origin,
    ...(model ? { model } : {}),
  });
  const missing = (what: string) => `not installed: apt-get install -y ${what}`;

  const stt: EngineEntry[] = [];
  if (section.stt.whisperCommand && section.stt.whisperModel) {
    const found = (await has(section.stt.whisperCommand)) && (await readable(section.stt.whisperModel));
    stt.push({
      engine: 'whisper.cpp',
      keyless: true,
      available: found && ffmpeg,
      ...(found ? {} : { detail: 'command or model not found' }),
    });
  }
  const sphinx = (await has(section.stt.pocketsphinxCommand)) && (await readable(POCKETSPHINX_MODEL));
  stt.push({
    engine: 'pocketsphinx',
    keyless: true,
    available: sphinx && ffmpeg,
    ...(sphinx && ffmpeg ? {} : { detail: missing(sphinx ? 'ffmpeg' : 'pocketsphinx pocketsphinx-en-us') }),
  });
  const main = section.stt.followMainKey ? context.mainProvider() : undefined;
  if (main) stt.push(keyed(main.id, main.baseUrl, main.model));
  for (const provider of section.stt.fallbacks)
    stt.push(keyed(provider.id, provider.baseUrl, provider.model));

  const espeak = await has(section.tts.espeakCommand);
  const tts: EngineEntry[] = [
    {
      engine: 'espeak-ng',
      keyless: true,
      available: espeak && ffmpeg,
      ...(espeak && ffmpeg ? {} : { detail: missing(espeak ? 'ffmpeg' : 'espeak-ng') }),
    },
  ];
  if (section.tts.provider)
    tts.push(keyed(section.tts.provider.id, section.tts.provider.baseUrl, section.tts.provider.model));

  const vision = section.vision.provider;
  const unconfigured = (engine: string, key: string): EngineEntry => ({
    engine,
    keyless: false,
    available: false,
    detail: `set ${key}`,
  });
  return {
    stt,
    tts,
    // In the order `auto` uses them: the provider when configured, else the keyless engine.
    vision: vision
      ? [keyed(vision.id, vision.baseUrl, vision.model), await keylessVisionEntry(context)]
      : [await keylessVisionEntry(context), unconfigured('vision', 'media.vision.provider')],
    imageGen: [
      section.imageGen.provider
        ? keyed(
            section.imageGen.provider.id,
            section.imageGen.provider.baseUrl,
            section.imageGen.provider.model,
          )
        : unconfigured('imageGen', 'media.imageGen.provider'),
    ],
    documents: [
      { engine: 'unpdf', keyless: true, available: true },
      { engine: 'mammoth', keyless: true, available: true },
      { engine: 'text', keyless: true, available: true },
    ],
    video: [
      {
        engine: 'ffmpeg-frames',
        keyless: false,
        available: ffmpeg && Boolean(vision) && section.vision.videoCapable,
        ...(!ffmpeg
          ? { detail: missing('ffmpeg') }
          : vision && section.vision.videoCapable
            ? {}
            : { detail: 'set media.vision.provider and media.vision.videoCapable: true' }),
      },
      await keylessVisionEntry(context, true),
    ],
    links: [
      {
        engine: 'readability',
        keyless: true,
        available: true,
        detail: section.links.allowPrivateNetwork ? 'private networks allowed' : 'public addresses only',
      },
    ],
  };
}
