import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { databasePerTest } from '@agentd/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEchoExecutor } from './echo-executor.js';
import { createGraphService, type GraphService } from './service.js';
import { createGraphTools, type GraphAgentTool } from './tools.js';

const temp = databasePerTest('graph-tools-', (dataDir) => openDatabase({ dataDir }));
let service: GraphService;
let events: Array<Record<string, unknown>>;

beforeEach(async () => {
  events = [];
  service = createGraphService({
    db: temp.db,
    runsDir: join(temp.dir, 'graph-runs'),
    executor: createEchoExecutor(),
    events: { emit: (_name, payload) => void events.push(payload) },
  });
  await service.start();
});

afterEach(() => service.close());

const context = { agentId: 'planner', sessionKey: 'default:rpc:u', signal: new AbortController().signal };

/** Calls a tool the way the agent runtime does: params through the tool's zod schema first. */
async function call(tool: GraphAgentTool, params: unknown): Promise<Record<string, unknown>> {
  return (await tool.handler(tool.params.parse(params), context)) as Record<string, unknown>;
}

describe('createGraphTools', () => {
  it('lets an agent define a pipeline and execute it, waiting for the outputs', async () => {
    const [define, execute] = createGraphTools({ service });
    const defined = await call(define!, {
      nodes: [
        { id: 'draft', prompt: 'draft about {{inputs.subject}}' },
        { id: 'edit', prompt: 'edit: {{nodes.draft.output}}', dependsOn: ['draft'] },
      ],
    });
    expect(defined).toMatchObject({ nodeCount: 2 });
    const result = await call(execute!, {
      graphId: defined.graphId,
      inputs: { subject: 'owls' },
      waitMs: 5000,
    });
    expect(result).toMatchObject({
      status: 'completed',
      outputs: { draft: 'draft about owls', edit: 'edit: draft about owls' },
    });
    const detail = await service.runDetail(result.runId as string);
    expect(detail.defaultAgentId).toBe('planner');
    expect(events.map((event) => [event.action, event.origin, event.agentId, event.valid])).toEqual([
      ['define', 'tool', 'planner', true],
      ['execute', 'tool', 'planner', true],
    ]);
  });

  it('returns validation issues to the agent and reports the invalid authoring', async () => {
    const [define] = createGraphTools({ service });
    const result = await call(define!, { nodes: [{ id: 'a', prompt: 'x', dependsOn: ['b'] }] });
    expect(result).toMatchObject({ valid: false, issues: [{ code: 'unknown_dependency' }] });
    const malformed = await call(define!, { nodes: [{ id: 'a' }] });
    expect(malformed).toMatchObject({ valid: false, issues: [{ path: ['nodes', 0, 'prompt'] }] });
    expect(events.map((event) => [event.valid, event.invalidReason])).toEqual([
      [false, 'validation'],
      [false, 'parse'],
    ]);
  });

  it('refuses nodes of other agents unless the agent-to-agent policy allows them', async () => {
    const { graphId } = await service.define({
      nodes: [
        { id: 'mine', prompt: 'x' },
        { id: 'theirs', prompt: 'x', agentId: 'researcher' },
      ],
    });
    const [, strict] = createGraphTools({ service });
    expect(await call(strict!, { graphId })).toMatchObject({ error: 'policy_denied' });
    expect(events.at(-1)).toMatchObject({ action: 'execute', excluded: 'policy_rejected' });
    expect((await service.runs()).runs).toEqual([]);

    const [, lenient] = createGraphTools({
      service,
      policy: ({ callerAgentId, targetAgentId }) => callerAgentId === 'planner' && targetAgentId !== 'root',
    });
    const started = await call(lenient!, { graphId });
    expect(started).toEqual({ runId: expect.any(String) });
    expect(await service.waitForRun(started.runId as string)).toBe('completed');
  });

  it('answers invalid execute params as a result the agent can read', async () => {
    const [, execute] = createGraphTools({ service });
    expect(await call(execute!, { graphId: 'x', concurrency: 0 })).toMatchObject({ error: 'invalid_params' });
  });
});
