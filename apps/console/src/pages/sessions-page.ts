import { html, LitElement, nothing } from 'lit';
import type { Connection } from '../connection.js';
import { errorText, formatTime, json } from '../internal/format.js';
import { href } from '../pages.js';
import { shared } from '../styles.js';

interface SessionRow {
  sessionKey: string;
  agentId: string;
  channelType?: string;
  kind: string;
  messageCount: number;
  turns?: number;
  updatedAt: number;
}

interface SearchHit {
  sessionKey: string;
  snippet: string;
  score: number;
  timestamp: number;
}

interface Message {
  seq: number;
  role: string;
  content: string;
  createdAt: number;
}

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
export class SessionsPage extends LitElement {
  static override properties = {
    sessions: { state: true },
    hits: { state: true },
    selected: { state: true },
    history: { state: true },
    exported: { state: true },
    message: { state: true },
    error: { state: true },
  };
  static override styles = [shared];

  declare conn: Connection;
  declare sessions: SessionRow[];
  declare hits: SearchHit[] | undefined;
  declare selected: string;
  declare history: Message[];
  declare exported: string;
  declare message: string;
  declare error: string;
  private kind = '';
  private sinceMs = 0;

  constructor() {
    super();
    this.sessions = [];
    this.hits = undefined;
    this.selected = '';
    this.history = [];
    this.exported = '';
    this.message = '';
    this.error = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.list();
  }

  private async run<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await work();
      this.error = '';
      return result;
    } catch (error) {
      this.error = errorText(error);
      return undefined;
    }
  }

  private async list(): Promise<void> {
    const params: Record<string, unknown> = { limit: 100 };
    if (this.kind) params.kind = this.kind;
    // session.list takes an epoch time; the filter names a window back from now.
    if (this.sinceMs) params.sinceMs = Date.now() - this.sinceMs;
    const answer = await this.run(
      () => this.conn.client.call('session.list', params) as Promise<{ sessions: SessionRow[] }>,
    );
    if (answer) this.sessions = answer.sessions;
  }

  private async search(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const query = ((event.target as HTMLFormElement).querySelector('input') as HTMLInputElement).value.trim();
    if (!query) {
      this.hits = undefined;
      return;
    }
    const hits = await this.run(
      () => this.conn.client.call('session.search', { query, limit: 20 }) as Promise<SearchHit[]>,
    );
    if (hits) this.hits = hits;
  }

  private async open(sessionKey: string): Promise<void> {
    this.selected = sessionKey;
    this.exported = '';
    this.message = '';
    const answer = await this.run(
      () => this.conn.client.call('session.history', { key: sessionKey }) as Promise<{ messages: Message[] }>,
    );
    this.history = answer?.messages ?? [];
  }

  private async exportSession(): Promise<void> {
    const record = await this.run(() =>
      this.conn.client.call('session.export', { session_key: this.selected }),
    );
    if (record !== undefined) this.exported = json(record);
  }

  private async compact(): Promise<void> {
    const result = await this.run(() => this.conn.client.call('session.compact', { key: this.selected }));
    if (result !== undefined) {
      await this.open(this.selected);
      this.message = `Compacted: ${JSON.stringify(result)}`;
    }
  }

  private async destroy(method: 'session.reset' | 'session.delete'): Promise<void> {
    const verb = method === 'session.reset' ? 'Reset (clear the messages of)' : 'Delete';
    if (!window.confirm(`${verb} session ${this.selected}? This cannot be undone.`)) return;
    const result = await this.run(() => this.conn.client.call(method, { session_key: this.selected }));
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
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.message ? html`<p class="ok" role="status">${this.message}</p>` : nothing}
      <form class="row" @submit=${this.search}>
        <label>Search messages <input type="search" size="24" /></label>
        <button type="submit">Search</button>
      </form>
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
      <div class="table-wrap" tabindex="0" role="region" aria-label="All sessions"><table>
        <thead><tr><th>Session</th><th>Agent</th><th>Kind</th><th>Messages</th><th>Updated</th></tr></thead>
        <tbody>${this.sessions.map(
          (s) => html`<tr>
            <td><button class="secondary" @click=${() => this.open(s.sessionKey)}>${s.sessionKey}</button></td>
            <td>${s.agentId}</td><td>${s.kind}</td><td>${s.messageCount}</td><td>${formatTime(s.updatedAt)}</td>
          </tr>`,
        )}</tbody></table></div>`;
  }
}

customElements.define('agentd-sessions-page', SessionsPage);
