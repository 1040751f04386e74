import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { ADMIN_TOKEN, daemonPool, openAiProviders, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-lazy-');
afterEach(() => pool.cleanup());

/** Whether the process has resolved a module of the npm package `name` (its pnpm store folder). */
function hasLoaded(trace: string, name: string): boolean {
  return trace.includes(`/node_modules/${name}/`);
}

describe('agentd start', () => {
  it('loads the AI SDK on the first model call and playwright-core on the first browser start, not before', async () => {
    const fake = pool.closeAfter(
      await startFakeOpenAi({ apiKey: 'k', respond: () => ({ text: 'lazy hello' }) }),
    );
    const dataDir = pool.tempDir();
    const traceFile = join(dataDir, 'modules.txt');
    writeFileSync(traceFile, '');
    writeFileSync(
      join(dataDir, 'config.yaml'),
      stringify({
        providers: openAiProviders('oai', fake.url, 'K', ['m']),
        agents: { entries: { gpt: { name: 'GPT', provider: 'oai' } } },
      }),
    );
    const daemon = await pool.startProcess(dataDir, {
      AGENTD_ADMIN_TOKEN: ADMIN_TOKEN,
      K: 'k',
      AGENTD_MODULE_TRACE: traceFile,
      NODE_OPTIONS: `--import ${join(import.meta.dirname, 'fixtures', 'module-trace.mjs')}`,
    });
    const trace = () => readFileSync(traceFile, 'utf8');
    const rpc = rpcClient(daemon.url);

    // The trace sees the daemon's own modules, so an empty one would not pass as lazy.
    expect(hasLoaded(trace(), 'zod')).toBe(true);
    expect(await rpc.call('system.ping')).toMatchObject({ pong: true });
    for (const heavy of [
      'ai',
      '@ai-sdk/openai-compatible',
      '@ai-sdk/anthropic',
      'playwright-core',
      'node-pty',
      '@xterm/headless',
      // No channel is configured: the chat platforms' SDKs stay out.
      'grammy',
      '@discordjs/rest',
      '@discordjs/ws',
      '@slack/web-api',
      // No MCP server is configured and `mcp.serve` is off: the MCP SDK stays out.
      '@modelcontextprotocol/sdk',
      // No skill archive was imported.
      'tar',
      // No cron job exists and no text needed its encoding guessed.
      'croner',
      'chardet',
      // No telemetry.otlp.endpoint: no OpenTelemetry SDK (prom-client loads only the small API package).
      '@opentelemetry/sdk-trace-base',
      '@opentelemetry/exporter-trace-otlp-http',
      // Storage is a libsql file: the PostgreSQL driver stays out.
      'pg',
    ]) {
      expect(hasLoaded(trace(), heavy), heavy).toBe(false);
    }

    expect(await rpc.call('agent.execute', { message: 'hi', agentId: 'gpt' })).toMatchObject({
      response: 'lazy hello',
    });
    expect(hasLoaded(trace(), 'ai')).toBe(true);
    expect(hasLoaded(trace(), '@ai-sdk/openai-compatible')).toBe(true);
    expect(hasLoaded(trace(), 'playwright-core')).toBe(false);

    await rpc.call('browser.start');
    expect(hasLoaded(trace(), 'playwright-core')).toBe(true);
    await rpc.call('browser.stop');
  });

  it('loads the media libraries on the first document read and usearch with the first stored vector, not at start', async () => {
    const dataDir = pool.tempDir();
    const traceFile = join(dataDir, 'modules.txt');
    writeFileSync(traceFile, '');
    const daemon = await pool.startProcess(dataDir, {
      AGENTD_ADMIN_TOKEN: ADMIN_TOKEN,
      AGENTD_MODULE_TRACE: traceFile,
      NODE_OPTIONS: `--import ${join(import.meta.dirname, 'fixtures', 'module-trace.mjs')}`,
    });
    const trace = () => readFileSync(traceFile, 'utf8');
    const rpc = rpcClient(daemon.url);
    expect(await rpc.call('system.ping')).toMatchObject({ pong: true });
    for (const heavy of ['unpdf', 'mammoth', 'linkedom', '@mozilla/readability', 'file-type', 'usearch'])
      expect(hasLoaded(trace(), heavy), heavy).toBe(false);
    await rpc.call('memory.store', { content: 'the first memory brings the vector index to life' });
    expect(hasLoaded(trace(), 'usearch')).toBe(true);
    const html = Buffer.from('<!doctype html><html><body><p>Lazy.</p></body></html>').toString('base64');
    expect(await rpc.call('media.extract_document', { data: html })).toMatchObject({ text: 'Lazy.' });
    expect(hasLoaded(trace(), 'file-type')).toBe(true);
    expect(hasLoaded(trace(), 'linkedom')).toBe(true);
    expect(hasLoaded(trace(), 'unpdf')).toBe(false);
  });
});
