import { thrownBy } from '@agentd/test-support';
import { describe, expect, it } from 'vitest';
import { compileGraph, graphDefinitionSchema } from './definition.js';
import { GraphError } from './errors.js';

const failure = (input: unknown, limits = {}) => thrownBy(() => compileGraph(input, limits), GraphError);

describe('compileGraph', () => {
  it('compiles a diamond and links dependants both ways', () => {
    const graph = compileGraph({
      nodes: [
        { id: 'a', prompt: 'start' },
        { id: 'b', prompt: 'left {{nodes.a.output}}', dependsOn: ['a'] },
        { id: 'c', prompt: 'right', dependsOn: ['a'] },
        { id: 'd', prompt: '{{nodes.b.output}} {{nodes.a.output}}', dependsOn: ['b', 'c'] },
      ],
    });
    expect(graph.nodes.map((node) => node.dependants)).toEqual([[1, 2], [3], [3], []]);
    expect(graph.nodes[3]!.dependencies).toEqual([1, 2]);
    expect(graph.indexOf.get('c')).toBe(2);
  });

  it('names a duplicate node id with its path', () => {
    const error = failure({
      nodes: [
        { id: 'a', prompt: 'x' },
        { id: 'a', prompt: 'y' },
      ],
    });
    expect(error.code).toBe('INVALID_GRAPH');
    expect(error.issues).toEqual([
      { path: ['nodes', 1, 'id'], code: 'duplicate_id', message: "duplicate node id 'a'" },
    ]);
  });

  it('names a dangling dependency', () => {
    const error = failure({ nodes: [{ id: 'a', prompt: 'x', dependsOn: ['ghost'] }] });
    expect(error.issues[0]).toMatchObject({ path: ['nodes', 0, 'dependsOn', 0], code: 'unknown_dependency' });
    expect(error.message).toContain("unknown node 'ghost'");
  });

  it('names the nodes of a cycle in order', () => {
    const error = failure({
      nodes: [
        { id: 'root', prompt: 'x' },
        { id: 'a', prompt: 'x', dependsOn: ['root', 'c'] },
        { id: 'b', prompt: 'x', dependsOn: ['a'] },
        { id: 'c', prompt: 'x', dependsOn: ['b'] },
      ],
    });
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]!.code).toBe('cycle');
    expect(error.message).toMatch(/cycle: (a → b → c → a|b → c → a → b|c → a → b → c)/);
  });

  it('rejects a node that depends on itself', () => {
    expect(failure({ nodes: [{ id: 'a', prompt: 'x', dependsOn: ['a'] }] }).message).toContain(
      'cycle: a → a',
    );
  });

  it('rejects a prompt that reads the output of a node it does not depend on', () => {
    const error = failure({
      nodes: [
        { id: 'a', prompt: 'x' },
        { id: 'b', prompt: '{{nodes.a.output}}' },
        { id: 'c', prompt: '{{ nodes.zzz.output }}', dependsOn: ['a'] },
      ],
    });
    expect(error.issues.map((issue) => issue.path)).toEqual([
      ['nodes', 1, 'prompt'],
      ['nodes', 2, 'prompt'],
    ]);
  });

  it('accepts reading the output of a transitive dependency', () => {
    expect(() =>
      compileGraph({
        nodes: [
          { id: 'a', prompt: 'x' },
          { id: 'b', prompt: 'y', dependsOn: ['a'] },
          { id: 'c', prompt: '{{nodes.a.output}}', dependsOn: ['b'] },
        ],
      }),
    ).not.toThrow();
  });

  it('enforces the node count and prompt size limits', () => {
    const nodes = Array.from({ length: 4 }, (_, index) => ({ id: `n${index}`, prompt: 'x' }));
    expect(failure({ nodes }, { maxNodes: 3 }).issues[0]!.path).toEqual(['nodes']);
    const long = failure({ nodes: [{ id: 'a', prompt: 'x'.repeat(11) }] }, { maxPromptChars: 10 });
    expect(long.issues[0]!.path).toEqual(['nodes', 0, 'prompt']);
    expect(long.data?.stage).toBe('parse');
  });

  it('rejects an empty graph, unknown keys and ids that cannot be referenced', () => {
    expect(failure({ nodes: [] }).issues[0]!.path).toEqual(['nodes']);
    expect(failure({ nodes: [{ id: 'a', prompt: 'x', colour: 'red' }] }).issues[0]!.code).toBe(
      'unrecognized_keys',
    );
    expect(failure({ nodes: [{ id: 'a.b', prompt: 'x' }] }).issues[0]!.path).toEqual(['nodes', 0, 'id']);
  });
});

describe('graphDefinitionSchema', () => {
  it('produces a JSON Schema that documents the node fields', async () => {
    const { toJSONSchema } = await import('zod');
    const schema = JSON.stringify(toJSONSchema(graphDefinitionSchema()));
    for (const field of ['dependsOn', 'timeoutMs', 'retries', 'agentId', 'prompt'])
      expect(schema).toContain(field);
  });
});
