import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-secrets-in-answers-');
afterEach(() => pool.cleanup());

/** Every file under `dir` as text (logs, evidence, config history objects are compressed and skipped). */
function textFiles(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === '.git') continue;
    if (statSync(path).isDirectory()) out.push(...textFiles(path));
    else if (/\.(jsonl|log|yaml|txt)$/.test(name)) out.push({ path, text: readFileSync(path, 'utf8') });
    // Database pages and their write-ahead logs, read byte for byte: a credential stored in a
    // row (a queue entry, an evidence or audit row) would show there as plain text.
    else if (/\.db(-wal)?$/.test(name)) out.push({ path, text: readFileSync(path, 'latin1') });
  }
  return out;
}

/** One unique marker value per name, planted where a credential goes. */
function plant<const Name extends string>(...names: Name[]): Record<Name, string> {
  return Object.fromEntries(names.map((name) => [name, `planted-${name}-value-5f1c`])) as Record<
    Name,
    string
  >;
}

/** The answers as text, an error as its message and data (what a client sees of it). */
function answersText(answers: unknown[]): string {
  return JSON.stringify(answers, (_key, value) =>
    value instanceof Error ? { message: value.message, data: (value as { data?: unknown }).data } : value,
  );
}

/**
 * Fails naming the credential and the place if any planted value is in the answers or in a
 * file of the data dir other than config.yaml (which holds them by design).
 */
function expectNowhere(
  planted: Record<string, string>,
  answerText: string,
  files: Array<{ path: string; text: string }>,
): void {
  const written = files.filter((file) => !file.path.endsWith('config.yaml'));
  for (const [name, secret] of Object.entries(planted)) {
    expect(answerText.includes(secret), `${name} in an answer`).toBe(false);
    for (const file of written) expect(file.text.includes(secret), `${name} in ${file.path}`).toBe(false);
  }
}

/** A 1x1 PNG. */
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Half a second of 16 kHz mono 16-bit silence as a WAV file. */
function silentWav(): Buffer {
  const samples = Buffer.alloc(16_000);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(16_000, 24);
  header.writeUInt32LE(32_000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}

describe('credentials never come back in answers or logs (issue #23)', () => {
  it('redacts provider key headers, URL user-info and an agent own credentials everywhere', async () => {
    const planted = plant(
      'xApiKey',
      'apiKeyHeader',
      'goog',
      'authToken',
      'custom',
      'urlPassword',
      'agentKey',
      'agentPassword',
    );
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('config.patch', {
      providers: {
        entries: {
          leaky: {
            type: 'openai-compatible',
            // Port 9 on loopback: nothing listens, and fetch refuses a URL with credentials anyway.
            baseUrl: `http://user:${planted.urlPassword}@127.0.0.1:9/v1`,
            models: ['m'],
            headers: {
              'X-Api-Key': planted.xApiKey,
              'api-key': planted.apiKeyHeader,
              'X-Goog-Api-Key': planted.goog,
              'x-auth-token': planted.authToken,
              'X-Team-Header': planted.custom,
              'anthropic-version': '2023-06-01',
            },
          },
        },
      },
    });
    await rpc.call('agents.create', {
      name: 'leaky',
      provider: 'leaky',
      apiKey: planted.agentKey,
      credentials: { password: planted.agentPassword },
    });

    const answers: unknown[] = [
      await rpc.call('config.read', { section: 'providers' }),
      await rpc.call('config.get', {}),
      await rpc.call('config.diff', {}),
      await rpc.call('agents.get', { agentId: 'leaky' }),
    ];
    answers.push(await rpc.fail('agent.execute', { message: 'hi', agentId: 'leaky' }));
    const answerText = answersText(answers);
    expect(answerText).toContain('2023-06-01');
    await daemon.stop();
    expectNowhere(planted, answerText, textFiles(daemon.dataDir));
  });

  it('keeps the credentials of channels, media, MCP servers and the memory embedder out of answers, logs, evidence and databases', async () => {
    const planted = plant(
      'telegram',
      'discord',
      'slackBot',
      'slackSigning',
      'whatsappAccess',
      'whatsappApp',
      'whatsappVerify',
      'visionKey',
      'imageKey',
      'ttsKey',
      'sttKey',
      'embedderKey',
      'mcpHeader',
      'mcpEnv',
    );
    // Port 9 on loopback: nothing listens, so every platform and provider call fails.
    const dead = 'http://127.0.0.1:9';
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        channels: {
          telegram: { enabled: true, botToken: planted.telegram, apiBaseUrl: dead },
          discord: {
            enabled: true,
            botToken: planted.discord,
            apiBaseUrl: dead,
            gatewayUrl: 'ws://127.0.0.1:9',
          },
          slack: {
            enabled: true,
            botToken: planted.slackBot,
            signingSecret: planted.slackSigning,
            apiBaseUrl: dead,
          },
          whatsapp: {
            enabled: true,
            accessToken: planted.whatsappAccess,
            appSecret: planted.whatsappApp,
            verifyToken: planted.whatsappVerify,
            phoneNumberId: '123456',
            apiBaseUrl: dead,
          },
          delivery: { maxAttempts: 1, baseDelayMs: 0 },
        },
        media: {
          stt: { order: 'keyed', fallbacks: [{ id: 'stt', baseUrl: dead, apiKey: planted.sttKey }] },
          tts: { order: 'keyed', provider: { id: 'tts', baseUrl: dead, apiKey: planted.ttsKey } },
          vision: { provider: { id: 'vision', baseUrl: dead, apiKey: planted.visionKey } },
          imageGen: { provider: { id: 'image', baseUrl: dead, apiKey: planted.imageKey } },
        },
        memory: {
          embedder: {
            provider: 'openai',
            baseUrl: dead,
            model: 'm',
            dimensions: 8,
            apiKey: planted.embedderKey,
          },
        },
        mcp: {
          servers: {
            remote: { url: `${dead}/mcp`, headers: { Authorization: `Bearer ${planted.mcpHeader}` } },
            local: { command: 'agentd-no-such-mcp-server', env: { API_TOKEN: planted.mcpEnv } },
          },
        },
      },
    });
    const rpc = rpcClient(daemon.url);
    const answers: unknown[] = [];
    const settle = async (call: Promise<unknown>) => {
      answers.push(await call.catch((error: unknown) => error));
    };
    for (const channel_type of ['telegram', 'discord', 'slack', 'whatsapp']) {
      await settle(rpc.call('message.send', { channel_type, channel_id: '42', text: 'hello' }));
    }
    await settle(rpc.call('channels.status', {}));
    await settle(rpc.call('delivery.queue.status', {}));
    await settle(rpc.call('media.test.vision', { data: PNG_1X1 }));
    await settle(rpc.call('image.analyze', { image: PNG_1X1 }));
    await settle(rpc.call('image.generate', { prompt: 'a lighthouse' }));
    await settle(rpc.call('media.test.tts', {}));
    await settle(rpc.call('media.test.stt', { data: silentWav().toString('base64') }));
    await settle(rpc.call('tts.synthesize', { text: 'hello' }));
    await settle(rpc.call('memory.store', { content: 'a fact worth keeping' }));
    await settle(rpc.call('memory.search', { query: 'fact' }));
    await settle(rpc.call('gateway.status', {}));
    await settle(rpc.call('capabilities.introspect', {}));
    for (const section of ['channels', 'media', 'memory', 'mcp']) {
      await settle(rpc.call('config.read', { section }));
    }
    await settle(rpc.call('config.get', {}));
    const answerText = answersText(answers);
    // The calls reached the configured parts: the answers name them.
    expect(answerText).toContain('telegram');
    expect(answerText).toContain('remote');
    expect(answerText).not.toContain('-32602');
    await daemon.stop();
    const files = textFiles(daemon.dataDir);
    expect(files.some((file) => file.path.endsWith('.db'))).toBe(true);
    expectNowhere(planted, answerText, files);
  });
});
