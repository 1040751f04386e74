import { css, html, LitElement, type PropertyValues, unsafeCSS } from 'lit';
import uPlot from 'uplot';
import uPlotCss from 'uplot/dist/uPlot.min.css?inline';

/**
 * A bar chart drawn by uPlot: one bar per label. The chart is a canvas, so the element also
 * carries a text summary for screen readers (`role="img"` with the values) and the numbers in
 * a table under a disclosure.
 */
export class BarChart extends LitElement {
  static override properties = {
    label: {},
    unit: {},
    labels: { attribute: false },
    values: { attribute: false },
  };
  // uPlot's stylesheet goes into this shadow root as a constructable stylesheet (CSP 'self').
  static override styles = [
    unsafeCSS(uPlotCss),
    css`
      :host { display: block; min-width: 0; }
      figure { margin: 0; }
      figcaption { font-weight: 600; margin-bottom: 0.25rem; }
      .plot { width: 100%; }
      table { border-collapse: collapse; font-size: 0.85rem; }
      td, th { padding: 0.1rem 0.5rem; text-align: left; }
      summary { cursor: pointer; font-size: 0.85rem; }
    `,
  ];

  label = '';
  unit = '';
  labels: string[] = [];
  values: number[] = [];
  private plot: uPlot | undefined;
  private resize: ResizeObserver | undefined;

  override disconnectedCallback(): void {
    this.resize?.disconnect();
    this.plot?.destroy();
    this.plot = undefined;
    super.disconnectedCallback();
  }

  override updated(changed: PropertyValues): void {
    if (changed.has('labels') || changed.has('values')) this.draw();
  }

  private draw(): void {
    const host = this.renderRoot.querySelector('.plot') as HTMLElement | null;
    if (!host) return;
    this.plot?.destroy();
    const labels = this.labels;
    const width = Math.max(host.clientWidth, 240);
    const options: uPlot.Options = {
      width,
      height: 200,
      legend: { show: false },
      cursor: { show: false },
      scales: {
        x: { time: false, range: [-0.5, Math.max(labels.length - 0.5, 0.5)] },
        y: { range: [0, null] },
      },
      axes: [
        {
          stroke: '#1b1f24',
          // Every label when they fit (about 48 px each), else every n-th, so they never overlap.
          values: (u, splits) => {
            const step = Math.max(1, Math.ceil(labels.length / Math.max(1, Math.floor(u.width / 48))));
            return splits.map((s) => (Number.isInteger(s) && s % step === 0 ? (labels[s] ?? '') : ''));
          },
          splits: () => labels.map((_, i) => i),
          grid: { show: false },
        },
        { stroke: '#1b1f24', size: 56 },
      ],
      series: [
        {},
        {
          label: this.label,
          fill: '#4a7fb5',
          stroke: '#0b4f8a',
          paths: uPlot.paths.bars?.({ size: [0.7, 60] }),
          points: { show: false },
        },
      ],
    };
    this.plot = new uPlot(options, [labels.map((_, i) => i), this.values], host);
    this.resize ??= new ResizeObserver(() => {
      const next = Math.max(host.clientWidth, 240);
      if (this.plot && Math.abs(this.plot.width - next) > 4) this.plot.setSize({ width: next, height: 200 });
    });
    this.resize.observe(host);
  }

  override render() {
    const summary = this.labels.map((l, i) => `${l}: ${this.values[i] ?? 0}${this.unit}`).join(', ');
    return html`<figure role="img" aria-label="${this.label}. ${summary || 'no data'}">
        <figcaption>${this.label}</figcaption>
        <div class="plot"></div>
      </figure>
      <details><summary>${this.label}: numbers</summary>
        <table><tbody>${this.labels.map((l, i) => html`<tr><th scope="row">${l}</th><td>${this.values[i]}${this.unit}</td></tr>`)}</tbody></table>
      </details>`;
  }
}

customElements.define('agentd-bar-chart', BarChart);
