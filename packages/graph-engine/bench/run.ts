/**
 * Engine overhead per node with a no-op executor, against a bare Promise.all over the same
 * no-op calls (no dependencies, no scheduling): a 1,000-node layered graph, a 10,000-node wide
 * graph (printed with RSS), and the durable service (libsql + one output file per node) for
 * scale. Run: `npx -y pnpm@10 bench graph-engine`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import {
  compileGraph,
  createGraphService,
  executeGraph,
  type GraphNodeDefinition,
  type NodeExecutor,
} from '../src/index.js';

const noop: NodeExecutor = { run: () => Promise.resolve('ok') };

/** Layers of 20 nodes; each node depends on up to three nodes of the previous layer and reads one output. */
function layered(count: number): GraphNodeDefinition[] {
  const width = 20;
  return Array.from({ length: count }, (_, index) => {
    const layer = Math.floor(index / width);
    if (layer === 0) return { id: `n${index}`, prompt: 'start {{inputs.topic}}' };
    const base = (layer - 1) * width;
    const dependsOn = [
      base + (index % width),
      base + ((index + 7) % width),
      base + ((index + 13) % width),
    ].map((i) => `n${i}`);
    return {
      id: `n${index}`,
      prompt: `step {{nodes.${dependsOn[0]}.output}}`,
      dependsOn: [...new Set(dependsOn)],
    };
  });
}

/** One root, count-2 independent middle nodes, one sink waiting for all of them. */
function wide(count: number): GraphNodeDefinition[] {
  const middle = Array.from({ length: count - 2 }, (_, index) => ({
    id: `w${index}`,
    prompt: 'work {{nodes.root.output}}',
    dependsOn: ['root'],
  }));
  return [
    { id: 'root', prompt: 'root' },
    ...middle,
    { id: 'sink', prompt: 'sink', dependsOn: middle.map((node) => node.id) },
  ];
}

function runFor(nodes: number, once: () => Promise<unknown>) {
  return async (ms: number) => {
    const until = performance.now() + ms;
    let ops = 0;
    while (performance.now() < until) {
      await once();
      ops += nodes;
    }
    return ops;
  };
}

const limits = { maxNodes: 20_000 };
const thousand = compileGraph({ nodes: layered(1000) }, limits);
const bare = (count: number) => () =>
  Promise.all(Array.from({ length: count }, () => noop.run({} as Parameters<NodeExecutor['run']>[0])));

const small = await interleave(
  [
    { name: 'Promise.all of 1,000 no-op calls (baseline)', runFor: runFor(1000, bare(1000)) },
    {
      name: 'executeGraph, 1,000-node layered graph',
      runFor: runFor(
        1000,
        () => executeGraph({ graph: thousand, executor: noop, concurrency: 16, inputs: { topic: 't' } }).done,
      ),
    },
  ],
  { warmupMs: 500, durationMs: 1500, rounds: 3 },
);
printComparison('1,000-node graph, no-op executor (ops = nodes)', small);
const [baseSmall, engineSmall] = small as [(typeof small)[0], (typeof small)[0]];
printFigure('engine time per node', 1e6 / engineSmall.opsPerSec, 'µs', { below: 500 });
printFigure(
  'engine overhead per node over baseline',
  1e6 / engineSmall.opsPerSec - 1e6 / baseSmall.opsPerSec,
  'µs',
  {
    below: 500,
  },
);

const wideDefinition = { nodes: wide(10_000) };
let wideGraph = compileGraph(wideDefinition, limits);
const wideStarted = performance.now();
for (let round = 0; round < 5; round++) wideGraph = compileGraph(wideDefinition, limits);
const compileMs = (performance.now() - wideStarted) / 5;
const large = await interleave(
  [
    { name: 'Promise.all of 10,000 no-op calls (baseline)', runFor: runFor(10_000, bare(10_000)) },
    {
      name: 'executeGraph, 10,000-node wide graph',
      runFor: runFor(10_000, () => executeGraph({ graph: wideGraph, executor: noop, concurrency: 64 }).done),
    },
  ],
  { warmupMs: 500, durationMs: 1500, rounds: 3 },
);
printComparison('10,000-node wide graph (root → 9,998 → sink), concurrency 64', large);
printFigure('compileGraph of the 10,000-node graph (mean of 5)', compileMs, 'ms');
printFigure('engine time per node', 1e6 / (large[1]?.opsPerSec ?? 1), 'µs', { below: 500 });
printFigure('RSS after the wide-graph runs', process.memoryUsage().rss / 1024 / 1024, 'MB');

// The durable path: the same 1,000-node graph through the service on a real libsql file.
const dir = mkdtempSync(join(tmpdir(), 'graph-bench-'));
try {
  const db = await openDatabase({ dataDir: dir });
  const service = createGraphService({
    db,
    runsDir: join(dir, 'graph-runs'),
    executor: noop,
    limits,
    maxConcurrency: 64,
  });
  await service.start();
  const { graphId } = await service.define({ nodes: layered(1000) });
  const durable = await interleave(
    [
      {
        name: 'service.execute, 1,000 nodes, libsql + output files',
        runFor: runFor(1000, async () => {
          const { runId } = await service.execute({ graphId, concurrency: 16, inputs: { topic: 't' } });
          await service.waitForRun(runId);
        }),
      },
    ],
    { warmupMs: 500, durationMs: 3000, rounds: 1 },
  );
  printComparison('durable runs (for scale; dominated by disk writes)', durable);
  printFigure('durable time per node', 1e6 / (durable[0]?.opsPerSec ?? 1), 'µs');
  printFigure('RSS at the end', process.memoryUsage().rss / 1024 / 1024, 'MB');
  await service.close();
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
