import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readTrajectory, recordingLogger, startRuntime } from '../test/helpers.js';
import { OFFLOAD_DIR, OFFLOAD_MAX_BYTES, offloadSessionDir, writeOffload } from '@agentd/evidence';
import { createOffloadReadTool, OFFLOAD_READ_MAX_CHARS, OFFLOAD_READ_TOOL } from './offload.js';
import type { ModelRequest } from './provider.js';
import type { AgentTool, EventSink } from './types.js';

/** Returns a JSON result of about `chars` characters, distinct per call. */
const dumpTool: AgentTool<{ chars: number; tag: string }> = {
  name: 'dump',
  description: 'Returns a large document',
  params: z.object({ chars: z.number().int().positive(), tag: z.string() }),
  handler: async ({ chars, tag }) => ({ tag, body: `${tag}:`.padEnd(chars, 'ab') }),
};

function recordingSink(): EventSink & {
  emitted: Array<{ event: string; payload: Record<string, unknown> }>;
} {
  const emitted: Array<{ event: string; payload: Record<string, unknown> }> = [];
  return { emitted, emit: (event, payload) => emitted.push({ event, payload }) };
}

async function start(options: { beforeStart?: (dir: string) => void } = {}) {
  const events = recordingSink();
  const logger = recordingLogger();
  const requests: ModelRequest[] = [];
  const t = await startRuntime({
    tools: [dumpTool],
    events,
    logger,
    now: () => 1_700_000_123_456,
    offline: {
      script: (request) => {
        requests.push(request);
        return undefined;
      },
    },
    // A window large enough for the truncated result to go back to the model.
    providers: { entries: { wide: { type: 'offline', models: ['wide'], contextWindow: 200_000 } } },
    agents: { entries: { big: { name: 'Big', provider: 'wide', tools: ['dump'] } } },
  });
  options.beforeStart?.(t.dir);
  const turn = (chars: number, sessionKey = 'acme:web:ann') =>
    t.runtime.runTurn({
      agentId: 'big',
      message: `/tool dump {"chars":${chars},"tag":"t${chars}"}`,
      sessionKey,
    });
  const offloads = () => events.emitted.filter((entry) => entry.event === 'offload:written');
  return { t, events, logger, requests, turn, offloads };
}

describe('createAgentRuntime offloads', () => {
  it('writes the full result of a large tool call to disk and points the model at it', async () => {
    const { t, turn, offloads, requests } = await start();
    const result = await turn(150_000);
    expect(result.endReason).toBe('completed');
    const full = JSON.stringify(await dumpTool.handler({ chars: 150_000, tag: 't150000' }, {} as never));

    expect(offloads()).toHaveLength(1);
    const payload = offloads()[0]?.payload ?? {};
    const diskPathRel = String(payload.diskPathRel);
    expect(diskPathRel).toMatch(
      new RegExp(`^${OFFLOAD_DIR}/${offloadSessionDir('acme:web:ann')}/1-[0-9a-f]{16}\\.json$`),
    );
    expect(readFileSync(join(t.dir, diskPathRel), 'utf8')).toBe(full);

    const [call] = readTrajectory(t.dir, 'acme:web:ann').filter((record) => record.type === 'tool_call');
    if (call?.type !== 'tool_call') throw new Error('no tool call recorded');
    expect(call.resultBytes).toBe(Buffer.byteLength(full));
    expect(payload).toEqual({
      sessionKey: 'acme:web:ann',
      agentId: 'big',
      traceId: result.traceId,
      toolName: 'dump',
      toolCallId: call.toolCallId,
      seq: 1,
      bytes: Buffer.byteLength(full),
      diskPathRel,
      resultDigest: call.resultDigest,
      resolved: true,
    });

    // The model got the head of the result and the pointer, not the whole result.
    const toolMessage = requests[1]?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content.startsWith(full.slice(0, 1000))).toBe(true);
    expect(toolMessage?.content.length).toBeLessThan(100_400);
    expect(toolMessage?.content).toContain(diskPathRel);
    expect(toolMessage?.content).toContain(`${Buffer.byteLength(full)} bytes`);
    const stored = (await t.runtime.sessions.history('acme:web:ann')).messages.find(
      (message) => message.role === 'tool',
    );
    expect(stored?.content).toBe(toolMessage?.content);
  });

  it('offloads nothing for results within the limit', async () => {
    const { t, turn, offloads } = await start();
    await turn(90_000);
    expect(offloads()).toEqual([]);
    expect(existsSync(join(t.dir, OFFLOAD_DIR))).toBe(false);
  });

  it('keeps one file per call, in the session directory', async () => {
    const { t, turn, offloads } = await start();
    await turn(120_000);
    await turn(130_000);
    await turn(140_000, 'other');
    const paths = offloads().map((entry) => String(entry.payload.diskPathRel));
    expect(new Set(paths).size).toBe(3);
    const sessionDir = join(t.dir, OFFLOAD_DIR, offloadSessionDir('acme:web:ann'));
    expect(readdirSync(sessionDir)).toHaveLength(2);
  });

  it('does not store a result above the cap and says so in the event and the message', async () => {
    const { t, turn, offloads, requests } = await start();
    const result = await turn(OFFLOAD_MAX_BYTES + 10);
    expect(result.endReason).toBe('completed');
    const payload = offloads()[0]?.payload;
    expect(payload).toMatchObject({ resolved: false, toolName: 'dump' });
    expect(Number(payload?.bytes)).toBeGreaterThan(OFFLOAD_MAX_BYTES);
    expect(existsSync(join(t.dir, String(payload?.diskPathRel)))).toBe(false);
    const toolMessage = requests[1]?.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('was not stored');
    expect(toolMessage?.content).not.toContain(String(payload?.diskPathRel));
  });

  it('finishes the turn and warns when the offload cannot be written', async () => {
    const { turn, offloads, logger } = await start({
      beforeStart: (dir) => {
        // A file where the directory should be: every mkdir under it fails.
        mkdirSync(join(dir, 'obs'), { recursive: true });
        writeFileSync(join(dir, OFFLOAD_DIR), 'not a directory');
      },
    });
    const result = await turn(150_000);
    expect(result.endReason).toBe('completed');
    expect(offloads()[0]?.payload).toMatchObject({ resolved: false });
    const warn = logger.entries.find((entry) => entry.message === 'tool result offload failed');
    expect(warn?.level).toBe('warn');
    expect(warn?.fields).toMatchObject({ errorKind: 'resource', hint: expect.stringContaining('offloads') });
    expect(JSON.stringify(warn?.fields)).not.toContain('abab');
  });
});

describe('createOffloadReadTool', () => {
  it('pages through an offload of the same session and refuses any other path', async () => {
    const t = await startRuntime();
    const text = JSON.stringify({ body: 'x'.repeat(50_000) });
    const written = await writeOffload({
      dataDir: t.dir,
      sessionKey: 'acme:web:ann',
      traceId: 'tr',
      toolCallId: 'c',
      seq: 1,
      ts: 1,
      text,
    });
    const tool = createOffloadReadTool(t.dir);
    const context = {
      agentId: 'big',
      sessionKey: 'acme:web:ann',
      traceId: 'tr',
      signal: new AbortController().signal,
    };
    const params = (input: Record<string, unknown>) => tool.params.parse(input);

    const first = (await tool.handler(params({ path: written.diskPathRel }), context)) as Record<
      string,
      unknown
    >;
    expect(first).toMatchObject({ offset: 0, totalChars: text.length, nextOffset: OFFLOAD_READ_MAX_CHARS });
    expect(first.text).toBe(text.slice(0, OFFLOAD_READ_MAX_CHARS));
    const last = (await tool.handler(
      params({ path: written.diskPathRel, offset: 40_000 }),
      context,
    )) as Record<string, unknown>;
    expect(last).toMatchObject({ text: text.slice(40_000), nextOffset: null });

    // Another session's offload, a path outside the offload dir, or a traversal: refused.
    const other = { ...context, sessionKey: 'acme:web:bob' };
    await expect(tool.handler(params({ path: written.diskPathRel }), other)).rejects.toThrow(
      'is not an offloaded result of this session',
    );
    for (const path of [
      'config.yaml',
      `${written.diskPathRel}/../../../config.yaml`,
      `${OFFLOAD_DIR}/x/1-0.json`,
    ]) {
      await expect(tool.handler(params({ path }), context)).rejects.toThrow('is not an offloaded result');
    }
    expect(() => params({ path: written.diskPathRel, length: OFFLOAD_READ_MAX_CHARS + 1 })).toThrow();
  });

  it('lets an agent allowed offload_read read on from where its truncated result stopped', async () => {
    const t = await startRuntime({
      tools: [dumpTool],
      offline: {
        script: (request, { call }) => {
          if (call !== 1) return undefined;
          // The model follows the pointer in the truncated result.
          const last = request.messages.at(-1);
          const content = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content);
          const match = /offload_read (\{[^}]*\})/.exec(content);
          if (!match) return { text: 'no pointer' };
          return { toolCalls: [{ toolName: OFFLOAD_READ_TOOL, input: JSON.parse(match[1] as string) }] };
        },
      },
      providers: { entries: { wide: { type: 'offline', models: ['wide'], contextWindow: 400_000 } } },
      agents: { entries: { big: { name: 'Big', provider: 'wide', tools: ['dump', OFFLOAD_READ_TOOL] } } },
    });
    const result = await t.runtime.runTurn({
      agentId: 'big',
      message: '/tool dump {"chars":150000,"tag":"long"}',
      sessionKey: 'acme:web:ann',
    });
    expect(result.endReason).toBe('completed');
    const full = JSON.stringify(await dumpTool.handler({ chars: 150_000, tag: 'long' }, {} as never));
    const { messages } = await t.runtime.sessions.history('acme:web:ann');
    const toolMessages = messages.filter((message) => message.role === 'tool');
    expect(toolMessages).toHaveLength(2);
    const page = JSON.parse(toolMessages[1]?.content ?? '{}') as { text: string; nextOffset: number };
    // The page continues exactly where the truncated result stopped.
    expect(full.startsWith(`${full.slice(0, 100_000)}${page.text}`)).toBe(true);
    expect(page.text.length).toBe(OFFLOAD_READ_MAX_CHARS);
    expect(page.nextOffset).toBe(100_000 + OFFLOAD_READ_MAX_CHARS);
  });
});
