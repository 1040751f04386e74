import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { databasePerTest, rejectionOf } from '@agentd/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEchoExecutor } from './echo-executor.js';
import { GraphError } from './errors.js';
import { createGraphService, type GraphService } from './service.js';

const temp = databasePerTest('graph-apply-', (dataDir) => openDatabase({ dataDir }));
let service: GraphService;

beforeEach(async () => {
  service = createGraphService({
    db: temp.db,
    runsDir: join(temp.dir, 'graph-runs'),
    executor: createEchoExecutor(),
    limits: { maxNodes: 3 },
  });
  await service.start();
});

afterEach(() => service.close());

const chain = (length: number) => ({
  nodes: Array.from({ length }, (_, index) => ({
    id: `n${index}`,
    prompt: `step ${index}`,
    ...(index > 0 ? { dependsOn: [`n${index - 1}`] } : {}),
  })),
});

const failure = (run: () => Promise<unknown>) => rejectionOf(run(), GraphError);

describe('GraphService.applyConfig', () => {
  it('refuses a definition over a lowered node limit and accepts one under a raised limit', async () => {
    await expect(service.define(chain(3))).resolves.toMatchObject({ nodeCount: 3 });
    service.applyConfig({ maxNodes: 2 });
    expect((await failure(() => service.define(chain(3)))).code).toBe('INVALID_GRAPH');
    service.applyConfig({ maxNodes: 5 });
    await expect(service.define(chain(5))).resolves.toMatchObject({ nodeCount: 5 });
  });

  it('checks the requested concurrency against the new maximum', async () => {
    const { graphId } = await service.define(chain(1));
    service.applyConfig({ maxConcurrency: 2 });
    expect((await failure(() => service.execute({ graphId, concurrency: 3 }))).code).toBe('INVALID_ARGUMENT');
    const { runId } = await service.execute({ graphId, concurrency: 2 });
    expect(await service.waitForRun(runId)).toBe('completed');
  });

  it('rejects an invalid section and keeps the settings it had', async () => {
    expect(() => service.applyConfig({ maxNodes: 0 })).toThrow(GraphError);
    expect((await failure(() => service.define(chain(4)))).code).toBe('INVALID_GRAPH');
  });
});
