import type { BillingApi } from '@agentd/agent-runtime';
import type { FleetHealthReport } from '@agentd/obs-reports';
import { css, html } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { type SessionListEntry, sessionTable } from '../internal/session-table.js';
import { rootCauseCard } from '../internal/templates.js';
import { href } from '../pages.js';
import { shared } from '../styles.js';
import { reactiveState } from '../internal/reactive-state.js';
import '../internal/bar-chart.js';

/** `obs.billing.byProvider` and `obs.billing.usage24h` answer what the runtime's billing API does. */
type ProviderCosts = Awaited<ReturnType<BillingApi['byProvider']>>;
type HourlyUsage = Awaited<ReturnType<BillingApi['usage24h']>>;

/**
 * Fleet health (admin): `obs.fleet.health` as charts (tokens per hour from
 * `obs.billing.usage24h`, degraded causes, top error kinds, cost by provider), the findings with
 * their hints and the likely root cause; each recent session links to its incident report.
 */
export class FleetPage extends ConsolePage {
  static override properties = reactiveState<FleetPage>('report', 'usage', 'providers', 'sessions');
  static override styles = [
    shared,
    css`
      .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 0.75rem; }
      .stats { display: flex; flex-wrap: wrap; gap: 0.5rem 1.5rem; }
      .stats div { min-width: 8rem; }
      .stats strong { display: block; font-size: 1.3rem; }
    `,
  ];

  report: FleetHealthReport | undefined = undefined;
  usage: HourlyUsage = [];
  providers: ProviderCosts['providers'] = [];
  sessions: SessionListEntry[] = [];

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const { client } = this.conn;
    const answers = await this.attempt(() =>
      Promise.all([
        client.call('obs.fleet.health', {}) as Promise<FleetHealthReport>,
        client.call('obs.billing.usage24h') as Promise<HourlyUsage>,
        client.call('obs.billing.byProvider') as Promise<ProviderCosts>,
        client.call('session.list', { limit: 50 }) as Promise<{ sessions: SessionListEntry[] }>,
      ]),
    );
    if (!answers) return;
    const [report, usage, byProvider, list] = answers;
    this.report = report;
    this.usage = usage;
    this.providers = byProvider.providers;
    this.sessions = list.sessions;
  }

  override render() {
    const r = this.report;
    return html`<h1>Fleet health</h1>
      <button class="secondary" @click=${() => this.load()}>Refresh</button>
      ${this.renderNotices()}
      ${r ? this.renderReport(r) : html`<p class="muted">Loading…</p>`}
      <h2>Sessions</h2>
      <p class="muted">Open a session's incident report: its failures, breaker events, root cause and next steps.</p>
      ${sessionTable('Sessions', this.sessions, (s) => html`<a href=${href('incident', s.sessionKey)}>${s.sessionKey}</a>`)}`;
  }

  private renderReport(r: FleetHealthReport) {
    const causes = Object.entries(r.degradedByCause);
    return html`<section class="card stats" aria-label="Summary of the last ${r.windowHours} hours">
        <div>Sessions<strong>${r.sessions.total}</strong></div>
        <div>Degraded<strong>${r.sessions.degraded} (${(r.sessions.degradedRate * 100).toFixed(1)} %)</strong></div>
        <div>Turns<strong>${r.activity.turnTotal}</strong></div>
        <div>Tokens<strong>${r.cost.totalTokens}</strong></div>
        <div>Cost<strong>$${r.cost.costUsd.toFixed(4)}</strong></div>
        <div>Breaker trips<strong>${r.breakerTripTotal}</strong></div>
      </section>
      ${rootCauseCard('Likely root cause', r)}
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
