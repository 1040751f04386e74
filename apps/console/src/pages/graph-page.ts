import type { RunDetail, RunOutputs, RunSummary } from '@agentd/graph-engine';
import { css, html, nothing, svg } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { type DagDrawing, layoutDag } from '../internal/dag-layout.js';
import { formatTime } from '../internal/format.js';
import { dataTable } from '../internal/templates.js';
import { href } from '../pages.js';
import { reactiveState } from '../internal/reactive-state.js';
import { shared } from '../styles.js';

/** Fill and text colours per node status (text contrast at least 4.5:1 on its fill). */
const STATUS_FILL: Readonly<Record<string, string>> = {
  completed: '#d7f5dd',
  running: '#fff1c2',
  pending: '#eef1f4',
  failed: '#ffd8d6',
  skipped: '#e8e8e8',
  cancelled: '#ffd8d6',
};

const ACTIVE = new Set(['pending', 'running']);

/**
 * Graph runs: the runs newest first; one run's DAG drawn with dagre (each node's status), its
 * nodes' attempts, errors and outputs, and cancel while it runs. Refreshes every second while
 * the shown run is active.
 */
export class GraphPage extends ConsolePage {
  static override properties = reactiveState<GraphPage>('runs', 'detail', 'outputs');
  static override styles = [
    shared,
    css`
      svg.dag { max-width: 100%; height: auto; display: block; border: 1px solid #d0d7de; background: #fff; }
      svg.dag text { font: 13px system-ui, sans-serif; fill: #1b1f24; }
      svg.dag path { fill: none; stroke: #57606a; stroke-width: 1.5; }
    `,
  ];

  runs: RunSummary[] = [];
  detail: RunDetail | undefined = undefined;
  outputs: RunOutputs['outputs'] = {};

  constructor() {
    super();
    this.pollRoute(
      1000,
      () => this.refresh(),
      () => this.detail !== undefined && ACTIVE.has(this.detail.status),
    );
  }

  private async refresh(): Promise<void> {
    const { client } = this.conn;
    // The run the route names (`#/graphs/<runId>`), if any.
    const [runId] = this.params;
    await this.attempt(async () => {
      const { runs } = (await client.call('graph.runs', { limit: 50 })) as { runs: RunSummary[] };
      this.runs = runs;
      if (!runId) {
        this.detail = undefined;
        return;
      }
      const [detail, { outputs }] = await Promise.all([
        client.call('graph.runDetail', { runId }) as Promise<RunDetail>,
        client.call('graph.outputs', { runId }) as Promise<RunOutputs>,
      ]);
      this.detail = detail;
      this.outputs = outputs;
    });
  }

  private async cancel(runId: string): Promise<void> {
    const cancelled = await this.attempt(() => this.conn.client.call('graph.cancel', { runId }));
    if (cancelled !== undefined) await this.refresh();
  }

  private drawDag(drawing: DagDrawing, runId: string) {
    const line = (points: Array<{ x: number; y: number }>) =>
      points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
    return html`<svg class="dag" width=${drawing.width} height=${drawing.height}
      viewBox="0 0 ${drawing.width} ${drawing.height}" role="img"
      aria-label="Graph of run ${runId}: ${drawing.nodes.map((n) => `${n.id} ${n.status}`).join(', ')}">
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
        <path d="M0,0 L10,5 L0,10 z" fill="#57606a"></path></marker></defs>
      ${drawing.edges.map((e) => svg`<path d=${line(e.points)} marker-end="url(#arrow)"></path>`)}
      ${drawing.nodes.map(
        (n) => svg`<g data-node=${n.id} data-status=${n.status}>
          <rect x=${n.x - n.w / 2} y=${n.y - n.h / 2} width=${n.w} height=${n.h} rx="6"
            fill=${STATUS_FILL[n.status] ?? '#eef1f4'} stroke="#57606a"></rect>
          <text x=${n.x} y=${n.y - 4} text-anchor="middle" font-weight="600">${n.id}</text>
          <text x=${n.x} y=${n.y + 13} text-anchor="middle">${n.status}</text>
        </g>`,
      )}
    </svg>`;
  }

  private renderDetail(detail: RunDetail) {
    const active = ACTIVE.has(detail.status);
    return html`<section class="card" aria-labelledby="run-title">
      <h2 id="run-title">Run <code>${detail.runId}</code>
        <span class="badge status-${detail.status}" data-testid="run-status">${detail.status}</span></h2>
      <p class="muted">Graph <code>${detail.graphId}</code>, started ${formatTime(detail.startedAt)}
        ${detail.cancelRequested ? html`, cancel requested` : nothing}</p>
      ${active ? html`<button class="danger" @click=${() => this.cancel(detail.runId)}>Cancel run</button>` : nothing}
      ${this.drawDag(layoutDag(detail.nodes), detail.runId)}
      ${dataTable(
        { label: 'Nodes of the run', columns: ['Node', 'Status', 'Attempts', 'Output or error'] },
        detail.nodes.map(
          (n) => html`<tr>
            <td><code>${n.id}</code></td>
            <td class="status-${n.status}">${n.status}</td>
            <td>${n.attempts}</td>
            <td>${n.error ? html`<span class="error">${n.error}</span>` : nothing}
              ${this.outputs[n.id] ? html`<details><summary>Output</summary><pre>${this.outputs[n.id]}</pre></details>` : nothing}</td>
          </tr>`,
        ),
      )}
    </section>`;
  }

  override render() {
    return html`<h1>Graph runs</h1>
      ${this.renderNotices()}
      ${this.detail ? this.renderDetail(this.detail) : nothing}
      <h2>Runs</h2>
      ${
        this.runs.length === 0
          ? html`<p class="muted">No graph has run yet.</p>`
          : dataTable(
              { label: 'Graph runs', columns: ['Run', 'Status', 'Nodes', 'Started'] },
              this.runs.map(
                (r) => html`<tr>
                  <td><a href=${href('graphs', r.runId)}>${r.runId.slice(0, 8)}</a></td>
                  <td class="status-${r.status}">${r.status}</td>
                  <td>${r.nodeCount}</td>
                  <td>${formatTime(r.startedAt)}</td>
                </tr>`,
              ),
            )
      }`;
  }
}

customElements.define('agentd-graph-page', GraphPage);
