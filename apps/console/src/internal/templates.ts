import type { RootCause } from '@agentd/obs-reports';
import { html, nothing, type TemplateResult } from 'lit';

/** Options of {@link dataTable}. */
export interface DataTableOptions {
  /** The region's accessible name (the table scrolls sideways inside it on a narrow screen). */
  label: string;
  /** Column headings, in order; an empty string leaves a column out (a heading shown only to admins). */
  columns: readonly string[];
  /** `data-testid` of the table, for the browser tests. */
  testId?: string;
}

/**
 * A table inside a labelled region that scrolls sideways on a narrow screen. The region takes
 * keyboard focus so its overflow can be scrolled without a mouse (axe's
 * `scrollable-region-focusable`). `rows` are the `<tr>`s of the body.
 */
export function dataTable(options: DataTableOptions, rows: unknown): TemplateResult {
  const { label, columns, testId } = options;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${label}><table data-testid=${testId ?? nothing}>
    <thead><tr>${columns.filter((c) => c !== '').map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

/**
 * A one-field search form: `label` names the field; `onSearch` gets the trimmed text on submit
 * (an empty string when the field was cleared).
 */
export function searchForm(label: string, size: number, onSearch: (query: string) => void): TemplateResult {
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const input = (event.currentTarget as HTMLFormElement).querySelector('input') as HTMLInputElement;
    onSearch(input.value.trim());
  };
  return html`<form class="row" @submit=${submit}>
    <label>${label} <input type="search" size=${size} /></label>
    <button type="submit">Search</button>
  </form>`;
}

/** The root cause and next steps of an `obs.explain` or `obs.fleet.health` report. */
export interface RootCauseReport {
  likelyRootCause: RootCause;
  suggestedNextSteps: string[];
}

/**
 * A report's likely root cause as a card headed `title`, with the next steps of the cause and
 * of the report (each step once).
 */
export function rootCauseCard(title: string, report: RootCauseReport): TemplateResult {
  const cause = report.likelyRootCause;
  const steps = [...new Set([...cause.suggestedNextSteps, ...report.suggestedNextSteps])];
  return html`<section class="card" aria-labelledby="root-cause">
    <h2 id="root-cause">${title}: <code>${cause.code}</code></h2>
    <p>${cause.detail}</p>
    <h3>Next steps</h3>
    ${steps.length === 0 ? html`<p class="muted">None suggested.</p>` : html`<ol>${steps.map((s) => html`<li>${s}</li>`)}</ol>`}
  </section>`;
}
