import { Graph, layout } from '@dagrejs/dagre';
import type { RunDetailNode } from '@agentd/graph-engine';

/** What the layout reads of a node of a graph run (`graph.runDetail`). */
export type DagNode = Pick<RunDetailNode, 'id' | 'dependsOn' | 'status'>;

/** The laid-out drawing: node boxes (centre x/y) and edge polylines, in SVG user units. */
export interface DagDrawing {
  width: number;
  height: number;
  nodes: Array<DagNode & { x: number; y: number; w: number; h: number }>;
  edges: Array<{ from: string; to: string; points: Array<{ x: number; y: number }> }>;
}

const NODE_W = 140;
const NODE_H = 46;

/** Lays a run's nodes out top to bottom with dagre (dependencies above their dependants). */
export function layoutDag(nodes: readonly DagNode[]): DagDrawing {
  const graph = new Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 40, marginx: 8, marginy: 8 });
  graph.setDefaultEdgeLabel(() => ({}));
  const known = new Set(nodes.map((n) => n.id));
  for (const node of nodes) graph.setNode(node.id, { width: NODE_W, height: NODE_H });
  for (const node of nodes)
    for (const dependency of node.dependsOn) if (known.has(dependency)) graph.setEdge(dependency, node.id);
  layout(graph);
  const label = graph.graph();
  return {
    width: Math.max(label.width ?? 0, NODE_W),
    height: Math.max(label.height ?? 0, NODE_H),
    nodes: nodes.map((node) => {
      const placed = graph.node(node.id);
      return { ...node, x: placed.x, y: placed.y, w: NODE_W, h: NODE_H };
    }),
    edges: graph.edges().map((edge: { v: string; w: string }) => ({
      from: edge.v,
      to: edge.w,
      points: graph.edge(edge).points ?? [],
    })),
  };
}
