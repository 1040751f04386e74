import type { CronJob, CronRun } from '@agentd/cron-wakegate';
import { html, nothing } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { formatTime } from '../internal/format.js';
import { reactiveState } from '../internal/reactive-state.js';
import { dataTable } from '../internal/templates.js';

/** The schedule object of `cron.add` / `cron.update` from the form's fields. */
function scheduleFrom(form: FormData): Record<string, unknown> {
  const kind = String(form.get('kind'));
  const value = String(form.get('when') ?? '').trim();
  if (kind === 'interval') return { kind, everyMs: Number(value) * 60_000 };
  if (kind === 'once') return { kind, at: new Date(value).toISOString() };
  const tz = String(form.get('tz') ?? '').trim();
  return { kind, expr: value, ...(tz ? { tz } : {}) };
}

/** How a job's schedule reads in the list. */
function describe(job: CronJob): string {
  if (job.scheduleKind === 'interval') return `every ${Math.round((job.everyMs ?? 0) / 60_000)} min`;
  if (job.scheduleKind === 'cron') return `cron ${job.expr ?? ''}${job.tz ? ` (${job.tz})` : ''}`;
  return `once at ${job.at ?? formatTime(job.nextRunAtMs)}`;
}

/**
 * Cron: the jobs with their next run, each job's run history (skipped wake-gate fires shown
 * as such), add and edit through one form, run now, and remove (confirmed first).
 */
export class CronPage extends ConsolePage {
  static override properties = reactiveState<CronPage>('jobs', 'runs', 'shown', 'editing');

  jobs: CronJob[] = [];
  runs: CronRun[] = [];
  shown = '';
  editing: CronJob | undefined = undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  /** Runs an action (see {@link ConsolePage.act}) and, once it succeeded, reloads the jobs. */
  private async change(work: () => Promise<string>): Promise<void> {
    if (await this.act(work)) await this.load();
  }

  private async load(): Promise<void> {
    const { client } = this.conn;
    await this.attempt(async () => {
      const { jobs } = (await client.call('cron.list')) as { jobs: CronJob[] };
      this.jobs = jobs;
      if (!this.shown) return;
      const { runs } = (await client.call('cron.runs', { jobName: this.shown, limit: 50 })) as {
        runs: CronRun[];
      };
      this.runs = runs;
    });
  }

  private save(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    // Read now: once the event is dispatched its target is retargeted to this element's host.
    const formElement = event.target as HTMLFormElement;
    const form = new FormData(formElement);
    const name = String(form.get('name')).trim();
    const message = String(form.get('message')).trim();
    const agentId = String(form.get('agentId') ?? '').trim();
    const params = { name, message, schedule: scheduleFrom(form), ...(agentId ? { agentId } : {}) };
    const editing = this.editing;
    return this.change(async () => {
      await this.conn.client.call(editing ? 'cron.update' : 'cron.add', params);
      this.editing = undefined;
      formElement.reset();
      return `${editing ? 'Updated' : 'Added'} job ${name}.`;
    });
  }

  /** cron.run only triggers the job: its run record appears once the turn ends, so poll for it. */
  private async runNow(name: string): Promise<void> {
    await this.showRuns(name);
    const newest = this.runs[0]?.ts;
    await this.change(async () => {
      await this.conn.client.call('cron.run', { name });
      return `Triggered ${name}.`;
    });
    for (let attempt = 0; attempt < 30 && this.shown === name && this.runs[0]?.ts === newest; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      await this.load();
    }
  }

  private showRuns(name: string): Promise<void> {
    this.shown = name;
    return this.load();
  }

  private removeJob(job: CronJob): Promise<void> {
    if (!window.confirm(`Remove cron job ${job.name}?`)) return Promise.resolve();
    if (this.shown === job.name) this.shown = '';
    return this.change(async () => {
      await this.conn.client.call('cron.remove', { name: job.name });
      return `Removed job ${job.name}.`;
    });
  }

  private renderForm() {
    const job = this.editing;
    const when =
      job?.scheduleKind === 'interval'
        ? String(Math.round((job.everyMs ?? 0) / 60_000))
        : job?.scheduleKind === 'cron'
          ? (job.expr ?? '')
          : '';
    return html`<form class="card" @submit=${this.save} aria-labelledby="cron-form-title">
      <h2 id="cron-form-title">${job ? html`Edit <code>${job.name}</code>` : 'Add a job'}</h2>
      <div class="row">
        <label>Name <input name="name" required maxlength="128" .value=${job?.name ?? ''} ?readonly=${!!job} /></label>
        <label>Agent <input name="agentId" placeholder="default" .value=${job?.agentId ?? ''} /></label>
        <label>Schedule <select name="kind">
          ${(['interval', 'cron', 'once'] as const).map(
            (k) =>
              html`<option value=${k} ?selected=${(job?.scheduleKind ?? 'interval') === k}>${k}</option>`,
          )}</select></label>
        <label>Every (minutes) / cron expression / time <input name="when" required .value=${when} /></label>
        <label>Time zone <input name="tz" placeholder="UTC" .value=${job?.tz ?? ''} /></label>
      </div>
      <label>Message <textarea name="message" rows="2" cols="50" required .value=${job?.message ?? ''}></textarea></label>
      <div class="row"><button type="submit">${job ? 'Save job' : 'Add job'}</button>
        ${job ? html`<button type="button" class="secondary" @click=${() => (this.editing = undefined)}>Cancel</button>` : nothing}</div>
    </form>`;
  }

  override render() {
    return html`<h1>Cron</h1>
      ${this.renderNotices()}
      ${dataTable(
        { label: 'Cron jobs', columns: ['Job', 'Schedule', 'Next run', 'Last run', 'Actions'] },
        this.jobs.map(
          (job) => html`<tr>
            <td><strong>${job.name}</strong> ${job.enabled ? nothing : html`<span class="badge">disabled</span>`}
              ${job.wakeGate ? html`<span class="badge">wake gate</span>` : nothing}
              ${job.lastError ? html`<br /><span class="error">${job.lastError}</span>` : nothing}</td>
            <td>${describe(job)}</td>
            <td>${formatTime(job.nextRunAtMs)}</td>
            <td>${formatTime(job.lastRunAtMs)}</td>
            <td><div class="row">
              <button @click=${() => this.runNow(job.name)}>Run now</button>
              <button class="secondary" @click=${() => this.showRuns(job.name)}>History</button>
              <button class="secondary" @click=${() => (this.editing = job)}>Edit</button>
              <button class="danger" @click=${() => this.removeJob(job)}>Remove</button>
            </div></td>
          </tr>`,
        ),
      )}
      ${this.jobs.length === 0 ? html`<p class="muted">No cron job yet.</p>` : nothing}
      ${
        this.shown
          ? html`<section class="card" aria-labelledby="runs-title"><h2 id="runs-title">Runs of <code>${this.shown}</code></h2>
            ${this.runs.length === 0 ? html`<p class="muted">No run yet.</p>` : nothing}
            <ol data-testid="cron-runs">${this.runs.map(
              (
                r,
              ) => html`<li><span class="badge status-${r.status === 'ok' ? 'ok' : r.status === 'error' ? 'failed' : 'waiting'}">${r.status === 'skipped' ? 'skipped by the wake gate' : r.status}</span>
                ${formatTime(r.ts)} (${r.durationMs} ms${r.trigger ? `, ${r.trigger}` : ''})
                ${r.error ? html`<span class="error">${r.error}</span>` : nothing}
                ${r.summary ? html`<pre>${r.summary}</pre>` : nothing}</li>`,
            )}</ol></section>`
          : nothing
      }
      ${this.renderForm()}`;
  }
}

customElements.define('agentd-cron-page', CronPage);
