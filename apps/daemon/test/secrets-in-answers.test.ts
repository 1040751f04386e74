import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rpcClient, startTestDaemon, type TestDaemon } from './helpers.js';

let td: TestDaemon | undefined;
afterEach(async () => {
  await td?.stop();
  td = undefined;
});

/** Every file under `dir` as text (logs, evidence, config history objects are compressed and skipped). */
function textFiles(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === '.git') continue;
    if (statSync(path).isDirectory()) out.push(...textFiles(path));
    else if (/\.(jsonl|log|yaml|txt)$/.test(name)) out.push({ path, text: readFileSync(path, 'utf8') });
  }
  return out;
}

describe('credentials never come back in answers or logs (issue #23)', () => {
  it('redacts provider key headers, URL user-info and an agent own credentials everywhere', async () => {
    const planted = {
      xApiKey: 'planted-x-api-key-7f3a',
      apiKeyHeader: 'planted-api-key-header-19bd',
      goog: 'planted-goog-key-55c1',
      authToken: 'planted-auth-token-0e42',
      custom: 'planted-custom-header-9911',
      urlPassword: 'planted-url-password-6d0c',
      agentKey: 'planted-agent-apikey-a7a7',
      agentPassword: 'planted-agent-password-3b3b',
    };
    td = await startTestDaemon();
    const rpc = rpcClient(td.daemon.url);
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
    const answerText = JSON.stringify(answers, (_key, value) =>
      value instanceof Error ? { message: value.message, data: (value as { data?: unknown }).data } : value,
    );
    expect(answerText).toContain('2023-06-01');
    await td.daemon.stop();
    const files = textFiles(td.dataDir).filter((file) => !file.path.endsWith('config.yaml'));
    for (const [name, secret] of Object.entries(planted)) {
      expect(answerText.includes(secret), `${name} in an answer`).toBe(false);
      for (const file of files) expect(file.text.includes(secret), `${name} in ${file.path}`).toBe(false);
    }
  });
});
