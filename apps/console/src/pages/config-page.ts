import type { ConfigHistoryEntry } from '@agentd/config-store';
import { html, nothing, type TemplateResult } from 'lit';
import {
  changesOf,
  type FieldChange,
  type FieldSchema,
  fieldKind,
  getAt,
  patchOf,
  setAt,
} from '../internal/config-form.js';
import { ConsolePage } from '../internal/console-page.js';
import { json } from '../internal/format.js';
import { reactiveState } from '../internal/reactive-state.js';
import { dataTable } from '../internal/templates.js';

/**
 * Config (admin): one section at a time as a form generated from `config.schema`, the changed
 * fields shown as a diff before `config.patch` saves them, and the git-backed history with
 * each commit's diff and a rollback (confirmed first).
 */
export class ConfigPage extends ConsolePage {
  static override properties = reactiveState<ConfigPage>(
    'sections',
    'section',
    'schema',
    'current',
    'draft',
    'review',
    'history',
    'shownDiff',
  );

  sections: string[] = [];
  section = '';
  schema: FieldSchema | undefined = undefined;
  current: Record<string, unknown> = {};
  draft: Record<string, unknown> = {};
  review: FieldChange[] | undefined = undefined;
  history: ConfigHistoryEntry[] = [];
  shownDiff: { sha: string; diff: string } | undefined = undefined;
  private jsonErrors = new Set<string>();

  override connectedCallback(): void {
    super.connectedCallback();
    void this.start();
  }

  private async start(): Promise<void> {
    const answer = await this.attempt(
      () => this.conn.client.call('config.schema') as Promise<{ sections: string[] }>,
    );
    if (!answer) return;
    this.sections = answer.sections;
    await Promise.all([this.open(this.section || answer.sections[0] || ''), this.loadHistory()]);
  }

  private async open(section: string): Promise<void> {
    this.section = section;
    this.review = undefined;
    this.message = '';
    this.jsonErrors.clear();
    const answers = await this.attempt(() =>
      Promise.all([
        this.conn.client.call('config.schema', { section }) as Promise<{ schema: FieldSchema }>,
        this.conn.client.call('config.read', { section }) as Promise<Record<string, unknown>>,
      ]),
    );
    if (!answers) return;
    const [{ schema }, current] = answers;
    this.schema = schema;
    this.current = current;
    this.draft = structuredClone(current);
  }

  private async loadHistory(): Promise<void> {
    const answer = await this.attempt(
      () =>
        this.conn.client.call('config.history', { limit: 20 }) as Promise<{ entries: ConfigHistoryEntry[] }>,
    );
    if (answer) this.history = answer.entries;
  }

  private edit(path: string[], value: unknown): void {
    this.draft = setAt(this.draft, path, value);
    this.review = undefined;
  }

  /** Runs `change` (a write), then reloads the section and the history and says what it did. */
  private async commit(change: () => Promise<unknown>, done: string): Promise<void> {
    if ((await this.attempt(change)) === undefined) return;
    await Promise.all([this.open(this.section), this.loadHistory()]);
    this.message = done;
  }

  private save(changes: FieldChange[]): Promise<void> {
    return this.commit(
      () => this.conn.client.call('config.patch', { [this.section]: patchOf(changes) }),
      `Saved ${changes.length} change(s) to ${this.section}.`,
    );
  }

  private async showDiff(sha: string): Promise<void> {
    const answer = await this.attempt(
      () => this.conn.client.call('config.diff', { sha }) as Promise<{ diff: string }>,
    );
    if (answer) this.shownDiff = { sha, diff: answer.diff };
  }

  private rollback(entry: ConfigHistoryEntry): Promise<void> {
    if (!window.confirm(`Roll the config back to ${entry.sha.slice(0, 8)} (${entry.message})?`))
      return Promise.resolve();
    return this.commit(
      () => this.conn.client.call('config.rollback', { sha: entry.sha }),
      `Rolled back to ${entry.sha.slice(0, 8)}.`,
    );
  }

  private field(path: string[], schema: FieldSchema): TemplateResult {
    const name = path[path.length - 1] ?? '';
    const id = `f-${path.join('-')}`;
    const value = getAt(this.draft, path);
    const kind = fieldKind(schema);
    const hint = schema.description ? html`<span class="muted">${schema.description}</span>` : nothing;
    switch (kind) {
      case 'object':
        return html`<fieldset class="card"><legend>${name}</legend>
          ${Object.entries(schema.properties ?? {}).map(([key, child]) => this.field([...path, key], child))}
        </fieldset>`;
      case 'boolean':
        return html`<div class="row"><label for=${id}>${name}</label>
          <input id=${id} type="checkbox" .checked=${value === true}
            @change=${(e: Event) => this.edit(path, (e.target as HTMLInputElement).checked)} />${hint}</div>`;
      case 'integer':
      case 'number':
        return html`<div class="row"><label>${name}
          <input id=${id} type="number" step=${kind === 'integer' ? '1' : 'any'} min=${schema.minimum ?? nothing}
            max=${schema.maximum ?? nothing} .value=${value === undefined ? '' : String(value)}
            @change=${(e: Event) => {
              const raw = (e.target as HTMLInputElement).value;
              this.edit(path, raw === '' ? undefined : Number(raw));
            }} /></label>${hint}</div>`;
      case 'enum':
        return html`<div class="row"><label>${name}
          <select id=${id} @change=${(e: Event) => this.edit(path, (e.target as HTMLSelectElement).value)}>
            ${(schema.enum as string[]).map((option) => html`<option ?selected=${option === value}>${option}</option>`)}
          </select></label>${hint}</div>`;
      case 'string':
      case 'text':
        return html`<div class="row"><label>${name}
          ${
            kind === 'text'
              ? html`<textarea id=${id} rows="3" cols="60" .value=${String(value ?? '')}
                @change=${(e: Event) => this.edit(path, (e.target as HTMLTextAreaElement).value)}></textarea>`
              : html`<input id=${id} size="30" .value=${String(value ?? '')}
                @change=${(e: Event) => this.edit(path, (e.target as HTMLInputElement).value)} />`
          }
          </label>${hint}</div>`;
      default:
        return html`<div class="row"><label>${name} (JSON)
          <textarea id=${id} rows="3" cols="60" .value=${json(value ?? null)}
            @change=${(e: Event) => {
              const key = path.join('.');
              try {
                this.edit(path, JSON.parse((e.target as HTMLTextAreaElement).value));
                this.jsonErrors.delete(key);
              } catch {
                this.jsonErrors.add(key);
                this.requestUpdate();
              }
            }}></textarea></label>
          ${this.jsonErrors.has(path.join('.')) ? html`<span class="error">not valid JSON</span>` : hint}</div>`;
    }
  }

  private renderReview(changes: FieldChange[]) {
    return html`<section class="card" aria-labelledby="review-title">
      <h2 id="review-title">Changes to ${this.section}</h2>
      ${
        changes.length === 0
          ? html`<p>Nothing changed.</p>`
          : html`${dataTable(
              { label: 'Changes', columns: ['Field', 'Before', 'After'], testId: 'config-diff' },
              changes.map(
                (c) => html`<tr><td><code>${c.path.join('.')}</code></td>
                  <td><pre>${json(c.before)}</pre></td><td><pre>${json(c.after)}</pre></td></tr>`,
              ),
            )}
          <div class="row"><button @click=${() => this.save(changes)}>Save</button>
            <button class="secondary" @click=${() => (this.review = undefined)}>Keep editing</button></div>`
      }
    </section>`;
  }

  override render() {
    return html`<h1>Config</h1>
      ${this.renderNotices()}
      <div class="row"><label>Section
        <select @change=${(e: Event) => this.open((e.target as HTMLSelectElement).value)}>
          ${this.sections.map((s) => html`<option ?selected=${s === this.section}>${s}</option>`)}
        </select></label></div>
      ${
        this.schema
          ? html`<form @submit=${(e: Event) => {
              e.preventDefault();
              if (this.schema) this.review = changesOf(this.schema, this.current, this.draft);
            }}>
            ${Object.entries(this.schema.properties ?? {}).map(([key, child]) => this.field([key], child))}
            <div class="row"><button type="submit" ?disabled=${this.jsonErrors.size > 0}>Review changes</button></div>
          </form>`
          : nothing
      }
      ${this.review ? this.renderReview(this.review) : nothing}
      <h2>History</h2>
      <p class="muted">Each commit of config.yaml, newest first; the diff shows what changed since.</p>
      ${dataTable(
        {
          label: 'Config history',
          columns: ['Commit', 'Date', 'Message', 'Actions'],
          testId: 'config-history',
        },
        this.history.map(
          (entry, index) => html`<tr>
            <td><code>${entry.sha.slice(0, 8)}</code></td><td>${entry.date}</td><td>${entry.message}</td>
            <td><div class="row"><button class="secondary" @click=${() => this.showDiff(entry.sha)}>Diff to now</button>
              ${index > 0 ? html`<button class="danger" @click=${() => this.rollback(entry)}>Roll back</button>` : nothing}</div></td>
          </tr>`,
        ),
      )}
      ${
        this.shownDiff
          ? html`<section class="card"><h3>From <code>${this.shownDiff.sha.slice(0, 8)}</code> to now</h3>
            <pre>${this.shownDiff.diff}</pre></section>`
          : nothing
      }`;
  }
}

customElements.define('agentd-config-page', ConfigPage);
