import { css, html, LitElement, nothing } from 'lit';
import type { Connection } from '../connection.js';
import { errorText, formatTime } from '../internal/format.js';
import { href } from '../pages.js';
import { shared } from '../styles.js';
import '../internal/bar-chart.js';

interface Finding {
  code: string;
  detail: string;
  count: number;
  hint: string;
}

interface FleetHealth {
  windowHours: number;
  sessions: { total: number; degraded: number; degradedRate: number };
  degradedByCause: Record<string, number>;
  topErrorKinds: Array<{ kind: string; count: number }>;
  breakerTripTotal: number;
  cost: { costUsd: number; totalTokens: number };
  activity: { activeAgents: string[]; turnTotal: number; tokenTotal: number };
  findings: Finding[];
  likelyRootCause: { code: string; detail: string; suggestedNextSteps?: string[] };
  suggestedNextSteps: string[];
}

interface SessionRow {
  sessionKey: string;
  agentId: string;
  kind: string;
  messageCount: number;
  updatedAt: number;
}

/**
 * Fleet health (admin): `obs.fleet.health` as charts (tokens per hour from
 * `obs.billing.usage24h`, degraded causes, top error kinds, cost by provider), the findings with
 * their hints and the likely root cause; each recent session links to its incident report.
 */
export class FleetPage extends LitElement {
  static override properties = {
    report: { state: true },
    usage: { state: true },
    providers: { state: true },
    sessions: { state: true },
    error: { state: true },
  };
  static override styles = [
    shared,
    css`
      .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 0.75rem; }
      .stats { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; }
      .stats div { min-width: 8rem; }
      .stats strong { display: block; font-size: 1.3rem; }
    `,
  ];

  declare conn: Connection;
  declare report: FleetHealth | undefined;
  declare usage: Array<{ hour: number; tokens: number }>;
  declare providers: Array<{
    provider: string;
    estimatedCostUsd: number;
    inputTokens: number;
    outputTokens: number;
  }>;
  declare sessions: SessionRow[];
  declare error: string;

  constructor() {
    super();
    this.report = undefined;
    this.usage = [];
    this.providers = [];
    this.sessions = [];
    this.error = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    try {
      const { client } = this.conn;
      const [report, usage, byProvider, list] = await Promise.all([
        client.call('obs.fleet.health', {}) as Promise<FleetHealth>,
        client.call('obs.billing.usage24h') as Promise<Array<{ hour: number; tokens: number }>>,
        client.call('obs.billing.byProvider') as Promise<{ providers: FleetPage['providers'] }>,
        client.call('session.list', { limit: 50 }) as Promise<{ sessions: SessionRow[] }>,
      ]);
      this.report = report;
      this.usage = usage;
      this.providers = byProvider.providers;
      this.sessions = list.sessions;
      this.error = '';
    } catch (error) {
      this.error = errorText(error);
    }
  }

  override render() {
    const r = this.report;
    return html`<h1>Fleet health</h1>
      <button class="secondary" @click=${() => this.load()}>Refresh</button>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${r ? this.renderReport(r) : html`<p class="muted">Loading…</p>`}
      <h2>Sessions</h2>
      <p class="muted">Open a session's incident report: its failures, breaker events, root cause and next steps.</p>
      <div class="table-wrap" tabindex="0" role="region" aria-label="Sessions"><table>
        <thead><tr><th>Session</th><th>Agent</th><th>Kind</th><th>Messages</th><th>Updated</th></tr></thead>
        <tbody>${this.sessions.map(
          (s) => html`<tr>
            <td><a href=${href('incident', s.sessionKey)}>${s.sessionKey}</a></td>
            <td>${s.agentId}</td><td>${s.kind}</td><td>${s.messageCount}</td><td>${formatTime(s.updatedAt)}</td>
          </tr>`,
        )}</tbody></table></div>`;
  }

  private renderReport(r: FleetHealth) {
    const causes = Object.entries(r.degradedByCause);
    const steps = [...new Set([...(r.likelyRootCause.suggestedNextSteps ?? []), ...r.suggestedNextSteps])];
    return html`<section class="card stats" aria-label="Summary of the last ${r.windowHours} hours">
        <div>Sessions<strong>${r.sessions.total}</strong></div>
        <div>Degraded<strong>${r.sessions.degraded} (${(r.sessions.degradedRate * 100).toFixed(1)} %)</strong></div>
        <div>Turns<strong>${r.activity.turnTotal}</strong></div>
        <div>Tokens<strong>${r.cost.totalTokens}</strong></div>
        <div>Cost<strong>$${r.cost.costUsd.toFixed(4)}</strong></div>
        <div>Breaker trips<strong>${r.breakerTripTotal}</strong></div>
      </section>
      <section class="card"><h2>Likely root cause: <code>${r.likelyRootCause.code}</code></h2>
        <p>${r.likelyRootCause.detail}</p>
        ${steps.length > 0 ? html`<h3>Next steps</h3><ol>${steps.map((s) => html`<li>${s}</li>`)}</ol>` : nothing}
      </section>
      <div class="charts">
        <agentd-bar-chart class="card" label="Tokens per hour (last 24 h)" unit=" tokens"
          .labels=${this.usage.map((u) => `${u.hour}h`)} .values=${this.usage.map((u) => u.tokens)}></agentd-bar-chart>
        <agentd-bar-chart class="card" label="Degraded sessions by cause" unit=""
          .labels=${causes.length ? causes.map(([c]) => c) : ['none']} .values=${causes.length ? causes.map(([, n]) => n) : [0]}></agentd-bar-chart>
        <agentd-bar-chart class="card" label="Top error kinds" unit=""
          .labels=${r.topErrorKinds.length ? r.topErrorKinds.map((e) => e.kind) : ['none']}
          .values=${r.topErrorKinds.length ? r.topErrorKinds.map((e) => e.count) : [0]}></agentd-bar-chart>
        <agentd-bar-chart class="card" label="Cost by provider (USD)" unit=" USD"
          .labels=${this.providers.map((p) => p.provider)} .values=${this.providers.map((p) => p.estimatedCostUsd)}></agentd-bar-chart>
      </div>
      <h2>Findings</h2>
      ${
        r.findings.length === 0
          ? html`<p>No findings in the last ${r.windowHours} hours.</p>`
          : html`<ul>${r.findings.map(
              (f) => html`<li class="card"><strong><code>${f.code}</code></strong> (${f.count}): ${f.detail}
              <br /><span class="muted">Hint: ${f.hint}</span></li>`,
            )}</ul>`
      }`;
  }
}

customElements.define('agentd-fleet-page', FleetPage);
