import type { IncidentReport } from '@agentd/obs-reports';
import { html, nothing, type PropertyValues } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { json } from '../internal/format.js';
import { dataTable, rootCauseCard } from '../internal/templates.js';
import { href } from '../pages.js';
import { reactiveState } from '../internal/reactive-state.js';

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
export class IncidentPage extends ConsolePage {
  static override properties = reactiveState<IncidentPage>('report');

  report: IncidentReport | undefined = undefined;

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
    this.report = await this.attempt(
      () => this.conn.client.call('obs.explain', { sessionKey, depth: 'full' }) as Promise<IncidentReport>,
    );
  }

  override render() {
    const r = this.report;
    return html`<p><a href=${href('fleet')}>← Fleet health</a></p>
      <h1>Incident report</h1>
      ${this.renderNotices()}
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
    const tools = Object.entries(r.toolStats);
    return html`<section class="card" aria-labelledby="incident-session">
        <h2 id="incident-session"><code>${r.sessionKey}</code>
          <span class="badge ${r.outcome.degraded ? 'status-failed' : 'status-ok'}">${r.outcome.degraded ? 'degraded' : 'not degraded'}</span></h2>
        <p>${r.summary}</p>
        <p class="muted">Agent ${r.agentId ?? '—'}, channel ${r.channel ?? '—'}, ended <code>${r.outcome.endReason}</code>
          (severity ${r.outcome.severity}); ${r.timing.turnCount} turn(s) in ${r.timing.durationMs} ms;
          ${r.cost.totalTokens} tokens, $${r.cost.costUsd.toFixed(4)}.</p>
      </section>
      ${rootCauseCard('Root cause', r)}
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
          : dataTable(
              { label: 'Tool statistics', columns: ['Tool', 'OK', 'Failed', 'Top error'] },
              tools.map(
                ([name, s]) =>
                  html`<tr><td><code>${name}</code></td><td>${s.ok}</td><td>${s.failed}</td><td>${s.topErrorKind ?? '—'}</td></tr>`,
              ),
            )
      }
      ${
        r.truncations.length > 0
          ? html`<p class="muted">Truncated: ${r.truncations.map((t) => `${t.field} (${t.dropped} left out)`).join(', ')}</p>`
          : nothing
      }
      <details><summary>Raw report</summary><pre>${json(r)}</pre></details>`;
  }
}

customElements.define('agentd-incident-page', IncidentPage);
