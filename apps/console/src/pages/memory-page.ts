import { html, LitElement, nothing } from 'lit';
import type { Connection } from '../connection.js';
import { errorText, formatTime } from '../internal/format.js';
import { shared } from '../styles.js';

interface MemoryEntry {
  id: string;
  content: string;
  score?: number;
  timestamp?: number;
  createdAt?: number;
  agentId?: string;
  kind?: string;
  trust?: string;
  tags?: string[];
}

const PAGE = 25;

/**
 * Memory: search (`memory.search`, full-text plus vector) with each hit's score; with an admin
 * token also browse every entry page by page (`memory.browse`) and delete one (confirmed).
 */
export class MemoryPage extends LitElement {
  static override properties = {
    results: { state: true },
    browsed: { state: true },
    total: { state: true },
    offset: { state: true },
    message: { state: true },
    error: { state: true },
  };
  static override styles = [shared];

  declare conn: Connection;
  declare results: MemoryEntry[] | undefined;
  declare browsed: MemoryEntry[];
  declare total: number;
  declare offset: number;
  declare message: string;
  declare error: string;
  private query = '';

  constructor() {
    super();
    this.results = undefined;
    this.browsed = [];
    this.total = 0;
    this.offset = 0;
    this.message = '';
    this.error = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.conn.admin) void this.browse(0);
  }

  private async search(event?: SubmitEvent): Promise<void> {
    event?.preventDefault();
    if (event)
      this.query = (
        (event.target as HTMLFormElement).querySelector('input') as HTMLInputElement
      ).value.trim();
    if (!this.query) {
      this.results = undefined;
      return;
    }
    try {
      const { results } = (await this.conn.client.call('memory.search', {
        query: this.query,
        limit: 20,
      })) as {
        results: MemoryEntry[];
      };
      this.results = results;
      this.error = '';
    } catch (error) {
      this.error = errorText(error);
    }
  }

  private async browse(offset: number): Promise<void> {
    try {
      const page = (await this.conn.client.call('memory.browse', { offset, limit: PAGE })) as {
        entries: MemoryEntry[];
        total: number;
      };
      this.browsed = page.entries;
      this.total = page.total;
      this.offset = offset;
    } catch (error) {
      this.error = errorText(error);
    }
  }

  private async deleteEntry(entry: MemoryEntry): Promise<void> {
    if (!window.confirm(`Delete memory ${entry.id}? This cannot be undone.`)) return;
    try {
      await this.conn.client.call('memory.delete', { id: entry.id });
      this.message = `Deleted ${entry.id}.`;
      await Promise.all([this.browse(this.offset), this.search()]);
    } catch (error) {
      this.error = errorText(error);
    }
  }

  private rows(entries: MemoryEntry[], withScore: boolean) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${withScore ? 'Search results' : 'All memories'}><table>
      <thead><tr>${withScore ? html`<th>Score</th>` : nothing}<th>Content</th><th>Details</th>
        ${this.conn.admin ? html`<th>Actions</th>` : nothing}</tr></thead>
      <tbody>${entries.map(
        (e) => html`<tr>
          ${withScore ? html`<td>${(e.score ?? 0).toFixed(4)}</td>` : nothing}
          <td>${e.content}</td>
          <td class="muted"><code>${e.id}</code><br />${formatTime(e.createdAt ?? e.timestamp)}
            ${e.agentId ? html`<br />agent ${e.agentId}` : nothing}${e.trust ? html`, ${e.trust}` : nothing}</td>
          ${this.conn.admin ? html`<td><button class="danger" @click=${() => this.deleteEntry(e)}>Delete</button></td>` : nothing}
        </tr>`,
      )}</tbody></table></div>`;
  }

  override render() {
    return html`<h1>Memory</h1>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.message ? html`<p class="ok" role="status">${this.message}</p>` : nothing}
      <form class="row" @submit=${this.search}>
        <label>Search memories <input type="search" size="28" /></label>
        <button type="submit">Search</button>
      </form>
      ${
        this.results
          ? html`<h2>Results</h2>${this.results.length === 0 ? html`<p>No memory matches.</p>` : this.rows(this.results, true)}`
          : nothing
      }
      ${
        this.conn.admin
          ? html`<h2>All memories (${this.total})</h2>
            ${this.rows(this.browsed, false)}
            <div class="row">
              <button class="secondary" ?disabled=${this.offset === 0} @click=${() => this.browse(Math.max(0, this.offset - PAGE))}>Previous</button>
              <span>${this.total === 0 ? 0 : this.offset + 1}–${Math.min(this.offset + PAGE, this.total)} of ${this.total}</span>
              <button class="secondary" ?disabled=${this.offset + PAGE >= this.total} @click=${() => this.browse(this.offset + PAGE)}>Next</button>
            </div>`
          : nothing
      }`;
  }
}

customElements.define('agentd-memory-page', MemoryPage);
