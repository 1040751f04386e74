import type { SessionMessage, SessionSearchHit } from '@agentd/agent-runtime';
import { html, nothing } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { formatTime, json } from '../internal/format.js';
import { type SessionListEntry, sessionTable } from '../internal/session-table.js';
import { searchForm } from '../internal/templates.js';
import { reactiveState } from '../internal/reactive-state.js';
import { href } from '../pages.js';

const KINDS = ['', 'main', 'subagent', 'hook', 'cron', 'graph'];
const SINCE: Array<[string, number]> = [
  ['any time', 0],
  ['last hour', 3_600_000],
  ['last day', 86_400_000],
  ['last week', 604_800_000],
];

/**
 * Sessions: the list with kind and recency filters (`session.list`), full-text search
 * (`session.search`), one session's history; with an admin token also export, compact and the
 * destructive reset and delete, each confirmed first.
 */
export class SessionsPage extends ConsolePage {
  static override properties = reactiveState<SessionsPage>(
    'sessions',
    'hits',
    'selected',
    'history',
    'exported',
  );

  sessions: SessionListEntry[] = [];
  hits: SessionSearchHit[] | undefined = undefined;
  selected = '';
  history: SessionMessage[] = [];
  exported = '';
  private kind = '';
  private sinceMs = 0;

  override connectedCallback(): void {
    super.connectedCallback();
    void this.list();
  }

  private async list(): Promise<void> {
    const params: Record<string, unknown> = { limit: 100 };
    if (this.kind) params.kind = this.kind;
    // session.list takes an epoch time; the filter names a window back from now.
    if (this.sinceMs) params.sinceMs = Date.now() - this.sinceMs;
    const answer = await this.attempt(
      () => this.conn.client.call('session.list', params) as Promise<{ sessions: SessionListEntry[] }>,
    );
    if (answer) this.sessions = answer.sessions;
  }

  private async search(query: string): Promise<void> {
    if (!query) {
      this.hits = undefined;
      return;
    }
    const hits = await this.attempt(
      () => this.conn.client.call('session.search', { query, limit: 20 }) as Promise<SessionSearchHit[]>,
    );
    if (hits) this.hits = hits;
  }

  private async open(sessionKey: string): Promise<void> {
    this.selected = sessionKey;
    this.exported = '';
    this.message = '';
    const answer = await this.attempt(
      () =>
        this.conn.client.call('session.history', { key: sessionKey }) as Promise<{
          messages: SessionMessage[];
        }>,
    );
    this.history = answer?.messages ?? [];
  }

  private async exportSession(): Promise<void> {
    const record = await this.attempt(() =>
      this.conn.client.call('session.export', { session_key: this.selected }),
    );
    if (record !== undefined) this.exported = json(record);
  }

  private async compact(): Promise<void> {
    const result = await this.attempt(() => this.conn.client.call('session.compact', { key: this.selected }));
    if (result !== undefined) {
      await this.open(this.selected);
      this.message = `Compacted: ${JSON.stringify(result)}`;
    }
  }

  private async destroy(method: 'session.reset' | 'session.delete'): Promise<void> {
    const verb = method === 'session.reset' ? 'Reset (clear the messages of)' : 'Delete';
    if (!window.confirm(`${verb} session ${this.selected}? This cannot be undone.`)) return;
    const result = await this.attempt(() => this.conn.client.call(method, { session_key: this.selected }));
    if (result === undefined) return;
    const done = `${method === 'session.reset' ? 'Reset' : 'Deleted'} ${this.selected}.`;
    if (method === 'session.delete') this.selected = '';
    else await this.open(this.selected);
    await this.list();
    this.message = done;
  }

  private renderSelected() {
    const admin = this.conn.admin;
    return html`<section class="card" aria-labelledby="session-title">
      <h2 id="session-title">Session <code>${this.selected}</code></h2>
      <div class="row">
        <a href=${href('chat', this.selected)}>Continue in chat</a>
        ${admin ? html`<a href=${href('incident', this.selected)}>Incident report</a>` : nothing}
      </div>
      ${
        admin
          ? html`<div class="row">
            <button class="secondary" @click=${() => this.exportSession()}>Export</button>
            <button class="secondary" @click=${() => this.compact()}>Compact</button>
            <button class="danger" @click=${() => this.destroy('session.reset')}>Reset</button>
            <button class="danger" @click=${() => this.destroy('session.delete')}>Delete</button>
          </div>`
          : nothing
      }
      ${this.exported ? html`<details open><summary>Export</summary><pre>${this.exported}</pre></details>` : nothing}
      <ol>${this.history.map(
        (m) =>
          html`<li><strong>${m.role}</strong> <span class="muted">${formatTime(m.createdAt)}</span><pre>${m.content}</pre></li>`,
      )}</ol>
      ${this.history.length === 0 ? html`<p class="muted">No messages.</p>` : nothing}
    </section>`;
  }

  override render() {
    return html`<h1>Sessions</h1>
      ${this.renderNotices()}
      ${searchForm('Search messages', 24, (query) => void this.search(query))}
      ${
        this.hits
          ? html`<h2>Search results</h2>${this.hits.length === 0 ? html`<p>No match.</p>` : nothing}
            <ul>${this.hits.map(
              (
                h,
              ) => html`<li><button class="secondary" @click=${() => this.open(h.sessionKey)}>${h.sessionKey}</button>
                <span class="muted">${formatTime(h.timestamp)}</span> ${h.snippet}</li>`,
            )}</ul>`
          : nothing
      }
      ${this.selected ? this.renderSelected() : nothing}
      <h2>All sessions</h2>
      <div class="row">
        <label>Kind <select @change=${(e: Event) => {
          this.kind = (e.target as HTMLSelectElement).value;
          void this.list();
        }}>${KINDS.map((k) => html`<option value=${k}>${k || 'any'}</option>`)}</select></label>
        <label>Updated <select @change=${(e: Event) => {
          this.sinceMs = Number((e.target as HTMLSelectElement).value);
          void this.list();
        }}>${SINCE.map(([label, ms]) => html`<option value=${ms}>${label}</option>`)}</select></label>
      </div>
      ${sessionTable(
        'All sessions',
        this.sessions,
        (s) =>
          html`<button class="secondary" @click=${() => this.open(s.sessionKey)}>${s.sessionKey}</button>`,
      )}`;
  }
}

customElements.define('agentd-sessions-page', SessionsPage);
