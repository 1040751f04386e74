import { html, LitElement, nothing, type PropertyValues } from 'lit';
import type { Connection } from '../connection.js';
import { errorText, json } from '../internal/format.js';
import { href } from '../pages.js';
import { shared } from '../styles.js';

interface IncidentReport {
  sessionKey: string;
  traceId?: string;
  agentId?: string;
  channel?: string;
  outcome: { endReason: string; degraded: boolean; severity: string };
  cost: { costUsd: number; totalTokens: number; cacheReadRatio: number };
  timing: { durationMs: number; turnCount: number };
  toolStats: Record<string, { ok: number; failed: number; topErrorKind?: string }>;
  failures: Array<{
    seq: number;
    toolName: string;
    errorKind: string;
    errorPreview?: string;
    resultBytes?: number;
  }>;
  breakerTimeline: Array<{ seq: number; event: string; toolName: string }>;
  summary: string;
  likelyRootCause: { code: string; detail: string; suggestedNextSteps?: string[] };
  suggestedNextSteps: string[];
  truncations: string[];
}

/** One line of the incident timeline: a failed tool call or a breaker event, by sequence. */
interface TimelineEntry {
  seq: number;
  what: string;
  tool: string;
  detail: string;
}

/**
 * A session's IncidentReport (`obs.explain`, admin) as a readable page: outcome, root cause
 * and next steps, a timeline merging tool failures and breaker events by sequence, tool
 * statistics, and the raw report under a disclosure.
 */
export class IncidentPage extends LitElement {
  static override properties = {
    params: { attribute: false },
    report: { state: true },
    error: { state: true },
  };
  static override styles = [shared];

  declare conn: Connection;
  declare params: string[];
  declare report: IncidentReport | undefined;
  declare error: string;

  constructor() {
    super();
    this.params = [];
    this.report = undefined;
    this.error = '';
  }

  override updated(changed: PropertyValues): void {
    if (changed.has('params')) void this.load();
  }

  private async load(): Promise<void> {
    const sessionKey = this.params[0];
    this.report = undefined;
    if (!sessionKey) {
      this.error = 'No session named: open a report from the Fleet health page.';
      return;
    }
    try {
      this.report = (await this.conn.client.call('obs.explain', {
        sessionKey,
        depth: 'full',
      })) as IncidentReport;
      this.error = '';
    } catch (error) {
      this.error = errorText(error);
    }
  }

  override render() {
    const r = this.report;
    return html`<p><a href=${href('fleet')}>← Fleet health</a></p>
      <h1>Incident report</h1>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${r ? this.renderReport(r) : nothing}`;
  }

  private renderReport(r: IncidentReport) {
    const timeline: TimelineEntry[] = [
      ...r.failures.map((f) => ({
        seq: f.seq,
        what: `failed: ${f.errorKind}`,
        tool: f.toolName,
        detail: f.errorPreview ?? '',
      })),
      ...r.breakerTimeline.map((b) => ({
        seq: b.seq,
        what: `breaker ${b.event}`,
        tool: b.toolName,
        detail: '',
      })),
    ].sort((a, b) => a.seq - b.seq);
    const steps = [...new Set([...(r.likelyRootCause.suggestedNextSteps ?? []), ...r.suggestedNextSteps])];
    const tools = Object.entries(r.toolStats);
    return html`<section class="card" aria-labelledby="incident-session">
        <h2 id="incident-session"><code>${r.sessionKey}</code>
          <span class="badge ${r.outcome.degraded ? 'status-failed' : 'status-ok'}">${r.outcome.degraded ? 'degraded' : 'not degraded'}</span></h2>
        <p>${r.summary}</p>
        <p class="muted">Agent ${r.agentId ?? '—'}, channel ${r.channel ?? '—'}, ended <code>${r.outcome.endReason}</code>
          (severity ${r.outcome.severity}); ${r.timing.turnCount} turn(s) in ${r.timing.durationMs} ms;
          ${r.cost.totalTokens} tokens, $${r.cost.costUsd.toFixed(4)}.</p>
      </section>
      <section class="card" aria-labelledby="root-cause">
        <h2 id="root-cause">Root cause: <code>${r.likelyRootCause.code}</code></h2>
        <p>${r.likelyRootCause.detail}</p>
        <h3>Next steps</h3>
        ${steps.length === 0 ? html`<p class="muted">None suggested.</p>` : html`<ol>${steps.map((s) => html`<li>${s}</li>`)}</ol>`}
      </section>
      <h2>Timeline of failures and breaker events</h2>
      ${
        timeline.length === 0
          ? html`<p>No tool failed and no breaker tripped in this session.</p>`
          : html`<ol class="timeline">${timeline.map(
              (t) => html`<li><strong>#${t.seq}</strong> <code>${t.tool}</code> ${t.what}
              ${t.detail ? html`<pre>${t.detail}</pre>` : nothing}</li>`,
            )}</ol>`
      }
      <h2>Tools</h2>
      ${
        tools.length === 0
          ? html`<p class="muted">No tool ran.</p>`
          : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Tool statistics"><table><thead><tr><th>Tool</th><th>OK</th><th>Failed</th><th>Top error</th></tr></thead>
            <tbody>${tools.map(([name, s]) => html`<tr><td><code>${name}</code></td><td>${s.ok}</td><td>${s.failed}</td><td>${s.topErrorKind ?? '—'}</td></tr>`)}</tbody>
          </table></div>`
      }
      ${r.truncations.length > 0 ? html`<p class="muted">Truncated: ${r.truncations.join(', ')}</p>` : nothing}
      <details><summary>Raw report</summary><pre>${json(r)}</pre></details>`;
  }
}

customElements.define('agentd-incident-page', IncidentPage);
