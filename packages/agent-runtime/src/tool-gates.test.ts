import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addTool, calcAgentOptions, readTrajectory, runAddTurn, startRuntime } from '../test/helpers.js';
import { agentDefinitionSchema } from './config.js';
import { digest } from '@agentd/evidence';
import { createRuntimeContext } from './runtime-context.js';
import { resolveRuntimeOptions } from './runtime-options.js';
import type { ToolGate } from './tool-gates.js';
import { createToolRunner, type ToolRun } from './tool-runner.js';
import type { AgentTool } from './types.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A tool runner on a scratch data directory (tool calls never touch the database). */
function runner(tools: AgentTool[], gates: ToolGate[]) {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-gates-'));
  dirs.push(dir);
  const ctx = createRuntimeContext(resolveRuntimeOptions({ db: {} as Database, dataDir: dir, tools }));
  return createToolRunner(ctx, gates);
}

const agent = agentDefinitionSchema.parse({ name: 'Calc', provider: 'offline', tools: ['*'] });

function call(toolName: string, input: unknown, seq = 1): ToolRun {
  return {
    agent,
    agentId: 'calc',
    allowedTools: undefined,
    sessionKey: 'g',
    traceId: 'trace-1',
    call: { toolCallId: `call-${seq}`, toolName, input },
    step: 1,
    seq,
    signal: new AbortController().signal,
  };
}

/** A gate that writes what it sees to `log`. */
function logging(name: string, log: string[]): ToolGate {
  return {
    name,
    before(gateCall) {
      log.push(`before:${name}:${gateCall.toolName}`);
      return { allow: true };
    },
    after(_gateCall, result) {
      log.push(`after:${name}:${result.ran}`);
      return result;
    },
  };
}

/** The add tool, noting each run of its handler in `log`. */
function loggedAdd(log: string[]): AgentTool {
  const tool: AgentTool<{ a: number; b: number }> = {
    ...addTool,
    handler: async ({ a, b }) => {
      log.push('handler');
      return { sum: a + b };
    },
  };
  return tool as AgentTool;
}

describe('tool gate chain', () => {
  it('orders the built-in gates around the added ones, offload last', () => {
    const tools = runner([addTool], [logging('audit', []), logging('approval', [])]);
    expect(tools.gates.map((gate) => gate.name)).toEqual([
      'allow_list',
      'input',
      'breaker',
      'audit',
      'approval',
      'offload',
    ]);
  });

  it('runs the before parts in order, then the handler, then the after parts in order', async () => {
    const log: string[] = [];
    const tools = runner([loggedAdd(log)], [logging('first', log), logging('second', log)]);
    const outcome = await tools.run(call('add', { a: 2, b: 3 }));
    expect(outcome.ok).toBe(true);
    expect(outcome.message.content).toBe('{"sum":5}');
    expect(log).toEqual([
      'before:first:add',
      'before:second:add',
      'handler',
      'after:first:true',
      'after:second:true',
    ]);
  });

  it('stops at the first deny: no later before part, no handler, the denial is the result', async () => {
    const log: string[] = [];
    const denyAll: ToolGate = {
      name: 'approval',
      before: (gateCall) => {
        log.push(`before:approval:${gateCall.toolName}`);
        return { allow: false, errorKind: 'approval_denied', message: `${gateCall.toolName} needs approval` };
      },
    };
    const tools = runner([loggedAdd(log)], [logging('first', log), denyAll, logging('third', log)]);
    const outcome = await tools.run(call('add', { a: 1, b: 1 }));
    expect(outcome.ok).toBe(false);
    expect(outcome.message).toMatchObject({ isError: true, content: '{"error":"add needs approval"}' });
    expect(outcome.record).toMatchObject({
      type: 'tool_call',
      ok: false,
      errorKind: 'approval_denied',
      errorPreview: 'add needs approval',
    });
    // No handler run; every after part still sees the result, told that the handler did not run.
    expect(log).toEqual([
      'before:first:add',
      'before:approval:add',
      'after:first:false',
      'after:third:false',
    ]);
  });

  it('answers a built-in refusal before any added gate is asked', async () => {
    const log: string[] = [];
    const tools = runner([addTool as AgentTool], [logging('audit', log)]);
    const unknown = await tools.run(call('nope', {}));
    const invalid = await tools.run(call('add', { a: 'x' }, 2));
    expect(unknown.record).toMatchObject({ errorKind: 'unknown_tool' });
    expect(invalid.record).toMatchObject({ errorKind: 'invalid_input' });
    expect(log).toEqual(['after:audit:false', 'after:audit:false']);
  });

  it('lets after parts transform what the model sees while the record describes the full result', async () => {
    const redact: ToolGate = {
      name: 'redact',
      after: (_gateCall, result) => ({ ...result, content: result.content.replace(/\d+/g, '#') }),
    };
    const failOdd: ToolGate = {
      name: 'fail-odd',
      after: (_gateCall, result) =>
        result.text.includes('"sum":5')
          ? { ...result, errorKind: 'policy', errorMessage: 'odd sums are refused' }
          : result,
    };
    const tools = runner([addTool as AgentTool], [redact, failOdd]);
    const even = await tools.run(call('add', { a: 2, b: 2 }));
    expect(even.message.content).toBe('{"sum":#}');
    expect(even.record).toMatchObject({ ok: true, resultBytes: 9, resultDigest: digest('{"sum":4}') });
    const odd = await tools.run(call('add', { a: 2, b: 3 }, 2));
    expect(odd.ok).toBe(false);
    expect(odd.message.isError).toBe(true);
    expect(odd.record).toMatchObject({
      ok: false,
      errorKind: 'policy',
      errorPreview: 'odd sums are refused',
    });
  });

  it('hands the params the input gate parsed to the handler and later gates', async () => {
    let seen: unknown;
    const defaults: AgentTool<{ a: number; b: number }> = {
      ...addTool,
      params: z.object({ a: z.number(), b: z.number().default(10) }),
    };
    const peek: ToolGate = {
      name: 'peek',
      before: (gateCall) => {
        seen = gateCall.params;
        return { allow: true };
      },
    };
    const tools = runner([defaults as AgentTool], [peek]);
    const outcome = await tools.run(call('add', { a: 1 }));
    expect(seen).toEqual({ a: 1, b: 10 });
    expect(outcome.message.content).toBe('{"sum":11}');
  });

  it('appends the toolGates option to the chain of every turn', async () => {
    const asked: string[] = [];
    const gate: ToolGate = {
      name: 'no-add',
      before: (gateCall) => {
        asked.push(`${gateCall.agentId}/${gateCall.sessionKey}/${gateCall.toolName}/${gateCall.seq}`);
        return { allow: false, errorKind: 'denied', message: 'add is switched off' };
      },
    };
    const t = await startRuntime({ ...calcAgentOptions, toolGates: [gate] });
    const result = await runAddTurn(t, 'tg');
    expect(result.endReason).toBe('completed_with_tool_errors');
    expect(asked).toEqual(['calc/tg/add/1']);
    const record = readTrajectory(t.dir, 'tg').find((entry) => entry.type === 'tool_call');
    expect(record).toMatchObject({ ok: false, errorKind: 'denied', errorPreview: 'add is switched off' });
    const { messages } = await t.runtime.sessions.history('tg');
    expect(messages[2]).toMatchObject({
      role: 'tool',
      isError: true,
      content: '{"error":"add is switched off"}',
    });
  });
});
