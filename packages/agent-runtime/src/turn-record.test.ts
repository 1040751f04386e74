import { describe, expect, it } from 'vitest';
import { readSessionIndex, recordingLogger, startRuntime } from '../test/helpers.js';
import { AgentRuntimeError } from './errors.js';

describe('createAgentRuntime', () => {
  it('writes one session-index row per turn with outcome, cost, tokens and duration', async () => {
    let clock = 1_700_000_000_000;
    const t = await startRuntime({ now: () => (clock += 5), randomId: () => 'trace-1' });
    await t.runtime.runTurn({ message: 'hello', sessionKey: 'acme:telegram:bob', origin: 'hook' });
    const [row] = readSessionIndex(t.dir);
    expect(row).toMatchObject({
      traceId: 'trace-1',
      messageId: 'acme:telegram:bob#1',
      sessionKey: 'acme:telegram:bob',
      agentId: 'default',
      channelType: 'webhook',
      chatId: 'telegram',
      origin: 'hook',
      kind: 'hook',
      provider: 'offline',
      model: 'offline',
      finishReason: 'stop',
      outcome: { endReason: 'completed', degraded: false, severity: 'info' },
      synthetic: false,
      steps: 1,
    });
    expect(row?.durationMs).toBeGreaterThan(0);
    expect(row?.tokens.total).toBeGreaterThan(0);
  });

  it('records a provider failure as an error turn and rethrows it', async () => {
    const logger = recordingLogger();
    const t = await startRuntime({
      logger,
      offline: {
        script: () => {
          throw new AgentRuntimeError('PROVIDER_AUTH', 'Provider offline: credential refused (HTTP 401)');
        },
      },
    });
    await expect(t.runtime.runTurn({ message: 'hi', sessionKey: 'err' })).rejects.toMatchObject({
      code: 'PROVIDER_AUTH',
    });
    const [row] = readSessionIndex(t.dir);
    expect(row?.outcome).toEqual({ endReason: 'error', degraded: true, severity: 'error' });
    expect(row?.errorCode).toBe('PROVIDER_AUTH');
    const warn = logger.entries.find((entry) => entry.level === 'warn');
    expect(warn?.fields).toMatchObject({ errorKind: 'auth' });
    expect(typeof warn?.fields.hint).toBe('string');
  });
});
