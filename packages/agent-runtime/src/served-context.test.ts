import { describe, expect, it } from 'vitest';
import { providersSectionSchema } from './config.js';
import { createServedWindowMonitor } from './served-context.js';
import type { ServedWindowPosture } from './served-window.js';

const providers = (model: string) =>
  providersSectionSchema.parse({
    entries: { vllm: { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', models: [model] } },
  });

/** A fetch answering every `/models` request with one 8192-token model, after `gate` opens. */
function servingFetch(gate: Promise<void> = Promise.resolve()) {
  let calls = 0;
  const fetcher = (async () => {
    calls++;
    await gate;
    return new Response(JSON.stringify({ data: [{ id: 'qwen-7b', max_model_len: 8192 }] }), {
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { fetcher, calls: () => calls };
}

describe('createServedWindowMonitor', () => {
  it('records each check and warns when a model is served below its configured window', async () => {
    const recorded: ServedWindowPosture[] = [];
    const warnings: string[] = [];
    const monitor = createServedWindowMonitor({
      record: (posture) => recorded.push(posture),
      logger: { warn: (_fields, message) => void warnings.push(message ?? '') },
      fetch: servingFetch().fetcher,
    });
    await monitor.check(providers('qwen-7b'));
    expect(recorded).toEqual([
      { servedBelowConfigured: 1, providersProbed: 1, providersUnreachable: 0, below: { vllm: ['qwen-7b'] } },
    ]);
    expect(warnings).toEqual(['model served with a smaller context window than configured']);
    await monitor.idle();
  });

  it('folds checks asked for during a check into one more run with the latest providers', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const { fetcher, calls } = servingFetch(gate);
    const recorded: ServedWindowPosture[] = [];
    const monitor = createServedWindowMonitor({
      record: (posture) => recorded.push(posture),
      logger: { warn: () => undefined },
      fetch: fetcher,
    });
    void monitor.check(providers('qwen-7b'));
    void monitor.check(providers('other'));
    const last = monitor.check(providers('qwen-7b'));
    open();
    await last;
    await monitor.idle();
    expect(calls()).toBe(2);
    expect(recorded.map((posture) => posture.servedBelowConfigured)).toEqual([1, 1]);
  });

  it('logs a failing record instead of rejecting', async () => {
    const warnings: string[] = [];
    const monitor = createServedWindowMonitor({
      record: () => {
        throw new Error('evidence store closed');
      },
      logger: { warn: (_fields, message) => void warnings.push(message ?? '') },
      fetch: servingFetch().fetcher,
    });
    await expect(monitor.check(providers('big'))).resolves.toBeUndefined();
    expect(warnings).toEqual(['posture check failed']);
  });
});
