import type { RunView } from '@agentd/autonomy';
import { css, html, nothing } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { formatTime } from '../internal/format.js';
import { href } from '../pages.js';
import { reactiveState } from '../internal/reactive-state.js';
import { shared } from '../styles.js';

/** A sub-agent run as `subagent.list` and `session.run_status` answer it. */
type Run = RunView;

/** One run tree: the runs sharing a root, each with its children in start order. */
interface TreeNode {
  run: Run;
  children: TreeNode[];
}

/** The statuses `subagent.list` filters by (the contract's run states). */
const STATUSES = ['running', 'completed', 'failed', 'killed', 'timeout', 'orphaned'] as const;

/**
 * Groups runs by `rootRunId` into trees (a run whose parent is not in the list hangs off its
 * tree's top), oldest tree last like the list itself.
 */
function runTrees(runs: readonly Run[]): Array<{ rootRunId: string; roots: TreeNode[] }> {
  const nodes = new Map<string, TreeNode>(runs.map((run) => [run.runId, { run, children: [] }]));
  const trees = new Map<string, TreeNode[]>();
  const byStart = [...runs].sort((a, b) => a.startedAt - b.startedAt);
  for (const run of byStart) {
    const node = nodes.get(run.runId)!;
    const parent = run.parentRunId !== undefined ? nodes.get(run.parentRunId) : undefined;
    if (parent && parent.run.rootRunId === run.rootRunId) parent.children.push(node);
    else {
      const roots = trees.get(run.rootRunId) ?? [];
      roots.push(node);
      trees.set(run.rootRunId, roots);
    }
  }
  return [...trees.entries()]
    .map(([rootRunId, roots]) => ({ rootRunId, roots }))
    .sort((a, b) => latestStart(b.roots) - latestStart(a.roots));
}

function latestStart(nodes: readonly TreeNode[]): number {
  return Math.max(...nodes.map((n) => Math.max(n.run.startedAt, latestStart(n.children))), 0);
}

/**
 * Sub-agent runs (admin): the runs grouped into their trees, filtered by status; one run's
 * record; kill a run (and what it spawned) or its whole tree after a confirmation, and steer a
 * running run with a new message. Refreshes every two seconds while a run is running.
 */
export class RunsPage extends ConsolePage {
  static override properties = reactiveState<RunsPage>('runs', 'status', 'detail');
  static override styles = [
    shared,
    css`
      ul.tree { list-style: none; padding-left: 0; margin: 0.3rem 0; }
      ul.tree ul.tree { padding-left: 1.2rem; border-left: 2px solid #d0d7de; }
      li.run { margin: 0.3rem 0; }
      .run-line { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; }
      .task { overflow-wrap: anywhere; }
    `,
  ];

  runs: Run[] = [];
  status = '';
  detail: Run | undefined = undefined;

  constructor() {
    super();
    this.pollRoute(
      2000,
      () => this.refresh(),
      () => this.runs.some((r) => r.status === 'running') || this.detail?.status === 'running',
    );
  }

  private async refresh(): Promise<void> {
    // The run the route names (`#/runs/<runId>`), if any.
    const [runId] = this.params;
    const { client } = this.conn;
    await this.attempt(async () => {
      const { runs } = (await client.call('subagent.list', {
        limit: 200,
        ...(this.status ? { status: this.status } : {}),
      })) as { runs: Run[] };
      this.runs = runs;
      this.detail = runId ? ((await client.call('session.run_status', { run_id: runId })) as Run) : undefined;
    });
  }

  /** Runs an action (see {@link ConsolePage.act}), then reloads whatever its outcome. */
  private async change(action: () => Promise<string>): Promise<void> {
    await this.act(action);
    await this.refresh();
  }

  private kill(run: Run): Promise<void> {
    if (!window.confirm(`Kill run ${run.runId} and every run it spawned?`)) return Promise.resolve();
    return this.change(async () => {
      const answer = (await this.conn.client.call('subagent.kill', {
        target: run.runId,
        reason: 'killed from the console',
      })) as { killed: number };
      return `Killed run ${run.runId} (${answer.killed} run(s) stopped).`;
    });
  }

  private killTree(rootRunId: string): Promise<void> {
    if (!window.confirm(`Kill the whole run tree ${rootRunId}?`)) return Promise.resolve();
    return this.change(async () => {
      const answer = (await this.conn.client.call('run.kill', { rootRunId })) as { killed: number };
      return `Killed run tree ${rootRunId} (${answer.killed} run(s) stopped).`;
    });
  }

  private steer(run: Run, event: Event): Promise<void> {
    event.preventDefault();
    const input = (event.target as HTMLFormElement).elements.namedItem('message') as HTMLTextAreaElement;
    const message = input.value.trim();
    if (!message) return Promise.resolve();
    return this.change(async () => {
      // Respawn (new run id) or inject (same run) depending on security.agentToAgent.steerInject.
      const answer = (await this.conn.client.call('subagent.steer', { target: run.runId, message })) as {
        status: string;
        newRunId?: string;
      };
      input.value = '';
      return answer.newRunId
        ? `Steered: run ${run.runId} replaced by ${answer.newRunId}.`
        : `Steered run ${run.runId} (message injected).`;
    });
  }

  private onFilter(event: Event): void {
    this.status = (event.target as HTMLSelectElement).value;
    void this.refresh();
  }

  private renderDetail(run: Run) {
    const running = run.status === 'running';
    return html`<section class="card" aria-labelledby="run-title">
      <h2 id="run-title">Run <code>${run.runId}</code>
        <span class="badge status-${run.status}" data-testid="run-status">${run.status}</span></h2>
      <p class="muted">Agent <code>${run.agentId}</code>, session <code>${run.sessionKey}</code>, depth ${run.depth},
        started ${formatTime(run.startedAt)}${run.completedAt ? html`, ended ${formatTime(run.completedAt)}` : nothing},
        ${Math.round(run.runtimeMs / 1000)} s, ${run.toolCalls} tool call(s)${run.resumed > 0 ? html`, resumed ${run.resumed}×` : nothing}</p>
      <p class="task"><strong>Task:</strong> ${run.task}</p>
      ${run.endReason ? html`<p>End reason: <code>${run.endReason}</code></p>` : nothing}
      ${run.error ? html`<p class="error">${run.error}</p>` : nothing}
      ${run.tokensUsed ? html`<p>Tokens: ${run.tokensUsed.input} in, ${run.tokensUsed.output} out (${run.tokensUsed.total} total)${run.cost !== undefined ? html`, cost ${run.cost}` : nothing}</p>` : nothing}
      ${run.response ? html`<details open><summary>Response</summary><pre>${run.response}</pre></details>` : nothing}
      ${
        running
          ? html`<form class="row" @submit=${(e: Event) => this.steer(run, e)}>
              <label>Steer message <textarea name="message" rows="2" maxlength="100000"></textarea></label>
              <button type="submit">Steer</button>
              <button type="button" class="danger" @click=${() => this.kill(run)}>Kill</button>
            </form>`
          : nothing
      }
    </section>`;
  }

  private renderNode(node: TreeNode): unknown {
    const { run } = node;
    return html`<li class="run" data-run=${run.runId}>
      <div class="run-line">
        <a href=${href('runs', run.runId)}><code>${run.runId.slice(0, 8)}</code></a>
        <span class="badge status-${run.status}" data-testid="status-${run.runId}">${run.status}</span>
        <span>${run.agentId}</span>
        <span class="muted">${formatTime(run.startedAt)}</span>
        ${
          run.status === 'running'
            ? html`<button class="danger" aria-label="Kill run ${run.runId}" @click=${() => this.kill(run)}>Kill</button>`
            : nothing
        }
      </div>
      <div class="task muted">${run.task.length > 160 ? `${run.task.slice(0, 160)}…` : run.task}</div>
      ${node.children.length > 0 ? html`<ul class="tree">${node.children.map((c) => this.renderNode(c))}</ul>` : nothing}
    </li>`;
  }

  private renderTrees() {
    if (this.runs.length === 0)
      return html`<p class="muted">No sub-agent run${this.status ? ` is ${this.status}` : ' yet'}.</p>`;
    return runTrees(this.runs).map((tree) => {
      const active = this.runs.some((r) => r.rootRunId === tree.rootRunId && r.status === 'running');
      return html`<section class="card" aria-label="Run tree ${tree.rootRunId}">
        <div class="run-line"><h2>Tree <code>${tree.rootRunId.slice(0, 8)}</code></h2>
          ${
            active
              ? html`<button class="danger" aria-label="Kill tree ${tree.rootRunId}" @click=${() => this.killTree(tree.rootRunId)}>Kill tree</button>`
              : nothing
          }</div>
        <ul class="tree">${tree.roots.map((n) => this.renderNode(n))}</ul>
      </section>`;
    });
  }

  override render() {
    return html`<h1>Runs</h1>
      <p class="muted">Sub-agent runs grouped by their run tree. Killing a run stops every run it spawned.</p>
      ${this.renderNotices()}
      ${this.detail ? this.renderDetail(this.detail) : nothing}
      <div class="row">
        <label>Status <select @change=${this.onFilter}>
          <option value="">any</option>
          ${STATUSES.map((s) => html`<option value=${s} ?selected=${this.status === s}>${s}</option>`)}
        </select></label>
        <button @click=${() => this.refresh()}>Refresh</button>
      </div>
      ${this.renderTrees()}`;
  }
}

customElements.define('agentd-runs-page', RunsPage);
