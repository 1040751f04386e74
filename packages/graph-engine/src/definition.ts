import { z } from 'zod';
import { GraphError, type GraphIssue } from './errors.js';
import { compileTemplate, referencedNodes, type Segment } from './internal/template.js';

/** Node ids: letters, digits, `_` and `-` (no dots, so `{{nodes.<id>.output}}` parses unambiguously). */
export const nodeIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** The limits a definition is checked against. */
export interface GraphLimits {
  /** Most nodes in one graph. @default 1000 */
  maxNodes?: number;
  /** Most characters in one node prompt (before rendering). @default 32768 */
  maxPromptChars?: number;
  /** Most retries one node may ask for. @default 10 */
  maxRetries?: number;
  /** Longest per-node timeout one node may ask for, in ms. @default 3600000 */
  maxTimeoutMs?: number;
}

/** Defaults of {@link GraphLimits}. */
export const defaultGraphLimits: Required<GraphLimits> = {
  maxNodes: 1000,
  maxPromptChars: 32_768,
  maxRetries: 10,
  maxTimeoutMs: 3_600_000,
};

/** One node as written by an author. */
export interface GraphNodeDefinition {
  /** Unique within the graph; see {@link nodeIdPattern}. */
  id: string;
  /** Prompt template: `{{inputs.x}}` and `{{nodes.<id>.output}}` are filled in at dispatch. */
  prompt: string;
  /** Agent that runs the node's turn; the executor decides the default. */
  agentId?: string | undefined;
  /** Nodes that must complete before this one starts. @default [] */
  dependsOn?: string[] | undefined;
  /** Time limit of one attempt in ms. @default the engine's `defaultTimeoutMs` */
  timeoutMs?: number | undefined;
  /** Extra attempts after a failure or timeout. @default 0 */
  retries?: number | undefined;
}

/** A graph as written by an author: `define {nodes, name?}`. */
export interface GraphDefinition {
  nodes: GraphNodeDefinition[];
  /** A label kept with the definition (saving under a name is `save`). */
  name?: string | undefined;
}

/** Builds the zod schema of a definition for the given limits. */
export function graphDefinitionSchema(limits: GraphLimits = {}) {
  const { maxNodes, maxPromptChars, maxRetries, maxTimeoutMs } = { ...defaultGraphLimits, ...limits };
  const node = z
    .object({
      id: z.string().regex(nodeIdPattern, 'node id: 1-64 letters, digits, _ or -'),
      prompt: z.string().min(1).max(maxPromptChars),
      agentId: z
        .string()
        .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'agent id: 1-128 letters, digits, ., _, : or -')
        .optional(),
      dependsOn: z.array(z.string().min(1).max(64)).max(maxNodes).optional(),
      timeoutMs: z.number().int().min(1).max(maxTimeoutMs).optional(),
      retries: z.number().int().min(0).max(maxRetries).optional(),
    })
    .strict();
  return z
    .object({
      nodes: z.array(node).min(1).max(maxNodes),
      name: z.string().min(1).max(200).optional(),
    })
    .strict();
}

/** A node after validation, with its dependencies resolved to indices. */
export interface CompiledNode {
  readonly id: string;
  readonly index: number;
  readonly prompt: string;
  readonly agentId: string | undefined;
  readonly dependsOn: readonly string[];
  readonly timeoutMs: number | undefined;
  readonly retries: number;
  /** Indices of the nodes this one waits for. */
  readonly dependencies: readonly number[];
  /** Indices of the nodes that wait for this one. */
  readonly dependants: number[];
  /** The parsed prompt. */
  readonly template: readonly Segment[];
}

/** A validated graph, ready to execute. */
export interface CompiledGraph {
  readonly nodes: readonly CompiledNode[];
  readonly name: string | undefined;
  /** Node index by id. */
  readonly indexOf: ReadonlyMap<string, number>;
  /** The definition as it was validated (what `save` stores). */
  readonly definition: GraphDefinition;
}

/**
 * Validates a definition and compiles it: the schema and limits, unique ids, no dangling
 * dependency, no cycle (the error names it, e.g. `a → b → a`), and prompts that only read
 * outputs of their own (transitive) dependencies, since any other output might not exist
 * yet when the prompt is rendered.
 *
 * @throws {GraphError} `INVALID_GRAPH` with `data.issues`.
 */
export function compileGraph(input: unknown, limits: GraphLimits = {}): CompiledGraph {
  const parsed = graphDefinitionSchema(limits).safeParse(input);
  if (!parsed.success) {
    throw invalid(
      parsed.error.issues.map((issue) => ({
        path: issue.path.map((key) => (typeof key === 'number' ? key : String(key))),
        code: issue.code,
        message: issue.message,
      })),
      'parse',
    );
  }
  const definition = stripUndefined(parsed.data);
  const issues: GraphIssue[] = [];
  const indexOf = new Map<string, number>();
  definition.nodes.forEach((node, index) => {
    if (indexOf.has(node.id)) {
      issues.push({
        path: ['nodes', index, 'id'],
        code: 'duplicate_id',
        message: `duplicate node id '${node.id}'`,
      });
    } else {
      indexOf.set(node.id, index);
    }
  });
  const nodes: CompiledNode[] = definition.nodes.map((node, index) => {
    const dependsOn = [...new Set(node.dependsOn ?? [])];
    const dependencies: number[] = [];
    const seen = new Set<number>();
    (node.dependsOn ?? []).forEach((dependency, position) => {
      const target = indexOf.get(dependency);
      if (target === undefined) {
        issues.push({
          path: ['nodes', index, 'dependsOn', position],
          code: 'unknown_dependency',
          message: `node '${node.id}' depends on unknown node '${dependency}'`,
        });
      } else if (target === index) {
        issues.push({
          path: ['nodes', index, 'dependsOn', position],
          code: 'cycle',
          message: `cycle: ${node.id} → ${node.id}`,
        });
      } else if (!seen.has(target)) {
        seen.add(target);
        dependencies.push(target);
      }
    });
    return {
      id: node.id,
      index,
      prompt: node.prompt,
      agentId: node.agentId,
      dependsOn,
      timeoutMs: node.timeoutMs,
      retries: node.retries ?? 0,
      dependencies,
      dependants: [],
      template: compileTemplate(node.prompt),
    };
  });
  if (issues.length > 0) throw invalid(issues, 'validation');
  for (const node of nodes) {
    for (const dependency of node.dependencies) nodes[dependency]!.dependants.push(node.index);
  }
  const cycle = findCycle(nodes);
  if (cycle) {
    throw invalid(
      [{ path: ['nodes'], code: 'cycle', message: `cycle: ${cycle.map((i) => nodes[i]!.id).join(' → ')}` }],
      'validation',
    );
  }
  checkReferences(nodes, indexOf, issues);
  if (issues.length > 0) throw invalid(issues, 'validation');
  return { nodes, name: definition.name, indexOf, definition };
}

function invalid(issues: GraphIssue[], stage: 'parse' | 'validation'): GraphError {
  const summary = issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'graph'}: ${issue.message}`)
    .join('; ');
  return new GraphError('INVALID_GRAPH', `Invalid graph: ${summary}`, { data: { issues, stage } });
}

/** Iterative depth-first search; returns the node indices of one cycle, first node repeated. */
function findCycle(nodes: readonly CompiledNode[]): number[] | undefined {
  const white = 0;
  const grey = 1;
  const black = 2;
  const colour = new Uint8Array(nodes.length);
  const stack: number[] = [];
  const cursor = new Uint32Array(nodes.length);
  for (let start = 0; start < nodes.length; start++) {
    if (colour[start] !== white) continue;
    stack.push(start);
    colour[start] = grey;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const dependants = nodes[top]!.dependants;
      if (cursor[top]! < dependants.length) {
        const next = dependants[cursor[top]!++]!;
        if (colour[next] === grey) {
          return [...stack.slice(stack.indexOf(next)), next];
        }
        if (colour[next] === white) {
          colour[next] = grey;
          stack.push(next);
        }
      } else {
        colour[top] = black;
        stack.pop();
      }
    }
  }
  return undefined;
}

function checkReferences(
  nodes: readonly CompiledNode[],
  indexOf: ReadonlyMap<string, number>,
  issues: GraphIssue[],
): void {
  for (const node of nodes) {
    const referenced = referencedNodes(node.template);
    if (referenced.length === 0) continue;
    const ancestors = ancestorsOf(nodes, node.index);
    for (const id of referenced) {
      const target = indexOf.get(id);
      if (target === undefined || !ancestors.has(target)) {
        issues.push({
          path: ['nodes', node.index, 'prompt'],
          code: 'unreachable_reference',
          message:
            target === undefined
              ? `node '${node.id}' reads the output of unknown node '${id}'`
              : `node '${node.id}' reads the output of '${id}' without depending on it`,
        });
      }
    }
  }
}

function ancestorsOf(nodes: readonly CompiledNode[], index: number): Set<number> {
  const seen = new Set<number>();
  const pending = [...nodes[index]!.dependencies];
  while (pending.length > 0) {
    const next = pending.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...nodes[next]!.dependencies);
  }
  return seen;
}

function stripUndefined(definition: GraphDefinition): GraphDefinition {
  // exactOptionalPropertyTypes-friendly copy: stored JSON never carries undefined keys.
  return JSON.parse(JSON.stringify(definition)) as GraphDefinition;
}
