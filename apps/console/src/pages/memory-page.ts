import type { MemoryEntry, MemoryRecord } from '@agentd/memory-store';
import { html, nothing } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { formatTime } from '../internal/format.js';
import { reactiveState } from '../internal/reactive-state.js';
import { dataTable, searchForm } from '../internal/templates.js';

/** A row of either list: a search hit (scored) or a browsed record (with its details). */
type ShownMemory = Pick<MemoryEntry, 'id' | 'content'> & Partial<MemoryEntry & MemoryRecord>;

const PAGE = 25;

/**
 * Memory: search (`memory.search`, full-text plus vector) with each hit's score; with an admin
 * token also browse every entry page by page (`memory.browse`) and delete one (confirmed).
 */
export class MemoryPage extends ConsolePage {
  static override properties = reactiveState<MemoryPage>('results', 'browsed', 'total', 'offset');

  results: MemoryEntry[] | undefined = undefined;
  browsed: MemoryRecord[] = [];
  total = 0;
  offset = 0;
  private query = '';

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.conn.admin) void this.browse(0);
  }

  /** Searches for `query`, or again for the last one (after a delete). */
  private async search(query = this.query): Promise<void> {
    this.query = query;
    if (!query) {
      this.results = undefined;
      return;
    }
    const answer = (await this.attempt(() => this.conn.client.call('memory.search', { query, limit: 20 }))) as
      | { results: MemoryEntry[] }
      | undefined;
    if (answer) this.results = answer.results;
  }

  private async browse(offset: number): Promise<void> {
    const page = (await this.attempt(() =>
      this.conn.client.call('memory.browse', { offset, limit: PAGE }),
    )) as { entries: MemoryRecord[]; total: number } | undefined;
    if (!page) return;
    this.browsed = page.entries;
    this.total = page.total;
    this.offset = offset;
  }

  private async deleteEntry(entry: ShownMemory): Promise<void> {
    if (!window.confirm(`Delete memory ${entry.id}? This cannot be undone.`)) return;
    const deleted = await this.act(async () => {
      await this.conn.client.call('memory.delete', { id: entry.id });
      return `Deleted ${entry.id}.`;
    });
    if (deleted) await Promise.all([this.browse(this.offset), this.search()]);
  }

  private rows(entries: ShownMemory[], withScore: boolean) {
    const admin = this.conn.admin;
    const columns = [withScore ? 'Score' : '', 'Content', 'Details', admin ? 'Actions' : ''];
    return dataTable(
      { label: withScore ? 'Search results' : 'All memories', columns },
      entries.map(
        (e) => html`<tr>
          ${withScore ? html`<td>${(e.score ?? 0).toFixed(4)}</td>` : nothing}
          <td>${e.content}</td>
          <td class="muted"><code>${e.id}</code><br />${formatTime(e.createdAt ?? e.timestamp)}
            ${e.agentId ? html`<br />agent ${e.agentId}` : nothing}${e.trust ? html`, ${e.trust}` : nothing}</td>
          ${admin ? html`<td><button class="danger" @click=${() => this.deleteEntry(e)}>Delete</button></td>` : nothing}
        </tr>`,
      ),
    );
  }

  override render() {
    return html`<h1>Memory</h1>
      ${this.renderNotices()}
      ${searchForm('Search memories', 28, (query) => void this.search(query))}
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
