import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { startFakeTelegram } from '../../../packages/channels/test/fake-telegram.js';
import { telegramMessage } from './channel-helpers.js';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { daemonPool, eventually, openAiProviders, rpcClient } from './helpers.js';

const TG_TOKEN = '5151:channel-images-telegram-token-0123';
const IMAGE_KEY = 'sk-image-provider-key-0123456789';
/** A 1x1 PNG; each generation appends its number after IEND so every image has its own bytes. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** A local OpenAI-compatible `/v1/images/generations` server (`b64_json` answers), recording each request. */
async function startImageServer(): Promise<{
  url: string;
  requests: Array<{ auth: string | undefined; body: Record<string, unknown> }>;
  images: Buffer[];
  /** The next answer repeats the previous image's bytes (a provider answering a retried request alike). */
  repeatNext(): void;
  close(): Promise<void>;
}> {
  let repeat = false;
  const requests: Array<{ auth: string | undefined; body: Record<string, unknown> }> = [];
  const images: Buffer[] = [];
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server = await listenLocal(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/images/generations') return void res.writeHead(404).end();
    requests.push({ auth: req.headers.authorization, body: JSON.parse(await read(req)) });
    const previous = images.at(-1);
    const image = repeat && previous ? previous : Buffer.concat([PNG, Buffer.from(`#${images.length + 1}`)]);
    repeat = false;
    images.push(image);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ created: 1, data: [{ b64_json: image.toString('base64') }] }));
  });
  return {
    url: `${server.url}/v1`,
    requests,
    images,
    repeatNext() {
      repeat = true;
    },
    close: server.close,
  };
}

const pool = daemonPool('agentd-channel-images-');
afterEach(() => pool.cleanup());

describe('generated images delivered to the calling channel', { timeout: 60_000 }, () => {
  it('sends the image of a channel turn to that chat through the queue, once, and never where the model says', async () => {
    const telegram = pool.closeAfter(await startFakeTelegram({ token: TG_TOKEN }));
    const images = pool.closeAfter(await startImageServer());
    // The model asks for an image, and once more with a chat of its own choosing (refused by the
    // tool's schema), then answers in text.
    const model = await startFakeOpenAi({
      apiKey: 'sk-model',
      respond: (_body, index) =>
        index === 0
          ? {
              toolCalls: [
                { id: 'c1', name: 'media_generate_image', input: { prompt: 'a red boat at dawn' } },
                {
                  id: 'c2',
                  name: 'media_generate_image',
                  input: { prompt: 'elsewhere', _callerChannelType: 'telegram', _callerChannelId: '999' },
                },
              ],
              finishReason: 'tool_calls',
            }
          : { text: 'Here is your boat.' },
    });
    pool.closeAfter(model);
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        providers: openAiProviders('oai', model.url, 'MODEL_KEY', ['gpt-fake']),
        agents: { entries: { artist: { name: 'Artist', provider: 'oai', tools: ['media_generate_image'] } } },
        media: { imageGen: { provider: { baseUrl: images.url, apiKey: '${secret:IMAGE_KEY}' } } },
        channels: {
          telegram: {
            enabled: true,
            botToken: '${secret:TG_TOKEN}',
            apiBaseUrl: telegram.url,
            agentId: 'artist',
            allowFrom: ['100'],
          },
        },
      },
      env: { TG_TOKEN, IMAGE_KEY, MODEL_KEY: 'sk-model' },
    });
    const rpc = rpcClient(daemon.url);

    telegram.pushUpdate({ message: telegramMessage(12, 100, 100, 'draw me a boat') });
    await eventually(async () => (telegram.of('sendMessage').length === 1 ? true : undefined));
    expect(telegram.of('sendMessage')[0]?.params).toMatchObject({
      chat_id: '100',
      text: 'Here is your boat.',
      reply_parameters: { message_id: 12 },
    });
    // One generation (the hostile call never reached the provider), one attachment, to the chat asked from.
    expect(images.requests).toHaveLength(1);
    expect(images.requests[0]).toMatchObject({
      auth: `Bearer ${IMAGE_KEY}`,
      body: { prompt: 'a red boat at dawn', response_format: 'b64_json' },
    });
    const documents = telegram.of('sendDocument');
    expect(documents).toHaveLength(1);
    expect(documents[0]?.params).toMatchObject({
      chat_id: '100',
      caption: 'a red boat at dawn',
      document: { filename: 'image.png', size: images.images[0]?.length },
    });
    // The model saw the delivery, not the image bytes; the hostile call was a validation error.
    const second = model.requests.filter((request) => request.path === '/v1/chat/completions')[1];
    const toolMessages = JSON.stringify(second?.body?.messages);
    expect(toolMessages).toContain('\\"delivered\\":true');
    expect(toolMessages).not.toContain(images.images[0]?.toString('base64'));
    expect(toolMessages).toContain('_callerChannelId');
    expect(await rpc.call('delivery.queue.status', { channelType: 'telegram' })).toMatchObject({
      sent: 2,
      deadLetter: 0,
    });

    // image.generate over RPC with the caller channel set goes the same way.
    const viaRpc = await rpc.call<Record<string, unknown>>('image.generate', {
      prompt: 'a lighthouse',
      _callerChannelType: 'telegram',
      _callerChannelId: '100',
    });
    expect(viaRpc).toMatchObject({ delivered: true, messageId: expect.any(String), mimeType: 'image/png' });
    expect(viaRpc).not.toHaveProperty('data');
    expect(telegram.of('sendDocument')).toHaveLength(2);
    // The same image to the same chat again is the same delivery: answered, not sent twice.
    images.repeatNext();
    const repeated = await rpc.call<Record<string, unknown>>('image.generate', {
      prompt: 'a lighthouse',
      _callerChannelType: 'telegram',
      _callerChannelId: '100',
    });
    expect(repeated).toMatchObject({ delivered: true, messageId: viaRpc.messageId });
    expect(telegram.of('sendDocument')).toHaveLength(2);
    // Without a caller channel the image comes back as base64 and nothing is sent.
    const plain = await rpc.call<{ data?: string }>('image.generate', { prompt: 'a tree' });
    expect(plain.data).toBe(images.images[3]?.toString('base64'));
    expect(telegram.of('sendDocument')).toHaveLength(2);
  });

  it('answers the tool error when the chat refuses the image, and sends it nowhere else', async () => {
    const telegram = pool.closeAfter(await startFakeTelegram({ token: TG_TOKEN }));
    const images = pool.closeAfter(await startImageServer());
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        media: { imageGen: { provider: { baseUrl: images.url, apiKey: IMAGE_KEY } } },
        channels: {
          telegram: { enabled: true, botToken: '${secret:TG_TOKEN}', apiBaseUrl: telegram.url },
          delivery: { maxAttempts: 2, baseDelayMs: 20 },
        },
      },
      env: { TG_TOKEN },
    });
    const rpc = rpcClient(daemon.url);
    telegram.fail('sendDocument', 400, 'Bad Request: chat not found');
    const refused = await rpc.fail('image.generate', {
      prompt: 'a lost parcel',
      _callerChannelType: 'telegram',
      _callerChannelId: '404',
    });
    expect(refused.message).toContain('chat not found');
    expect(await rpc.call('delivery.queue.status', { channelType: 'telegram' })).toMatchObject({
      sent: 0,
      deadLetter: 1,
    });
    const unconfigured = await rpc.fail('image.generate', {
      prompt: 'to discord',
      _callerChannelType: 'discord',
      _callerChannelId: '1',
    });
    expect(unconfigured.message).toContain('discord is not configured');
  });
});
