import { html, LitElement, nothing } from 'lit';
import type { Connection } from '../connection.js';
import { errorText, formatTime, json } from '../internal/format.js';
import { PollController } from '../internal/poll.js';
import { shared } from '../styles.js';

/** A channel type as `channels.list` lists it. */
interface Listing {
  type: string;
  status: string;
  inbound: boolean;
}

/** The stages of the delivery queue, in the order a message passes them. */
const STAGES = ['queued', 'sending', 'sent', 'failed', 'deadLetter'] as const;
type StageCounts = Record<string, number>;

/** `channels.status` of one channel type: its listing, adapter health, queue counts, refusals. */
interface ChannelStatus extends Listing {
  health: { state?: string } & Record<string, unknown>;
  queue: StageCounts;
  refused: number;
}

/** A delivery trace from `obs.delivery.recent`. */
interface DeliveryTrace {
  id: number;
  ts: number;
  channelId: string;
  outcome: string;
  latencyMs: number;
  errorKind?: string;
}

/** A platform's status, or why it could not be read. */
type Row = { listing: Listing; status?: ChannelStatus; error?: string };

/**
 * Channels (admin): every channel type (webchat and the four platforms) with its status and
 * adapter health, the delivery queue by stage (overall and per channel), and the most recent
 * delivery traces. Refreshes every five seconds.
 */
export class ChannelsPage extends LitElement {
  static override properties = {
    rows: { state: true },
    queue: { state: true },
    deliveries: { state: true },
    error: { state: true },
  };
  static override styles = [shared];

  declare conn: Connection;
  declare rows: Row[];
  declare queue: StageCounts | undefined;
  declare deliveries: DeliveryTrace[];
  declare error: string;

  constructor() {
    super();
    this.rows = [];
    this.queue = undefined;
    this.deliveries = [];
    this.error = '';
    new PollController(this, { everyMs: 5000, refresh: () => this.refresh() });
  }

  private async refresh(): Promise<void> {
    const client = this.conn.client;
    try {
      const [{ channels }, queue, { deliveries }] = await Promise.all([
        client.call('channels.list') as Promise<{ channels: Listing[] }>,
        client.call('delivery.queue.status') as Promise<StageCounts>,
        client.call('obs.delivery.recent', { limit: 25 }) as Promise<{ deliveries: DeliveryTrace[] }>,
      ]);
      // One status call per channel type, so one platform's failure leaves the others shown.
      this.rows = await Promise.all(
        channels.map(async (listing): Promise<Row> => {
          try {
            const answer = (await client.call('channels.status', { channel_type: listing.type })) as {
              channels: ChannelStatus[];
            };
            const status = answer.channels[0];
            return status ? { listing, status } : { listing };
          } catch (error) {
            return { listing, error: errorText(error) };
          }
        }),
      );
      this.queue = queue;
      this.deliveries = deliveries;
      this.error = '';
    } catch (error) {
      this.error = errorText(error);
    }
  }

  private renderCounts(counts: StageCounts, label: string, testId: string) {
    return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${label}><table data-testid=${testId}>
      <thead><tr>${STAGES.map((s) => html`<th scope="col">${s}</th>`)}</tr></thead>
      <tbody><tr>${STAGES.map((s) => html`<td class=${counts[s] ? `status-${s}` : ''} data-stage=${s}>${counts[s] ?? 0}</td>`)}</tr></tbody>
    </table></div>`;
  }

  private renderChannel(row: Row) {
    const { listing, status } = row;
    return html`<section class="card" aria-label="Channel ${listing.type}" data-channel=${listing.type}>
      <h3>${listing.type} <span class="badge status-${listing.status}" data-testid="channel-status-${listing.type}">${listing.status}</span></h3>
      <p class="muted">Inbound messages ${listing.inbound ? 'routed to an agent' : 'not routed'}${
        status ? html`, ${status.refused} sender(s) refused since start` : nothing
      }</p>
      ${row.error ? html`<p class="error">${row.error}</p>` : nothing}
      ${
        status
          ? html`${this.renderCounts(status.queue, `Delivery queue of ${listing.type}`, `queue-${listing.type}`)}
            <details><summary>Health</summary><pre>${json(status.health)}</pre></details>`
          : nothing
      }
    </section>`;
  }

  override render() {
    return html`<h1>Channels</h1>
      <p class="muted">Channel types, their adapters' health and the delivery queue. Updated every five seconds.</p>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      <div class="row"><button @click=${() => this.refresh()}>Refresh</button></div>
      <h2>Delivery queue</h2>
      ${this.queue ? this.renderCounts(this.queue, 'Delivery queue by stage', 'queue-all') : nothing}
      <h2>Channel types</h2>
      ${this.rows.map((row) => this.renderChannel(row))}
      <h2>Recent deliveries</h2>
      ${
        this.deliveries.length === 0
          ? html`<p class="muted">No delivery recorded yet.</p>`
          : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Recent deliveries"><table>
            <thead><tr><th>Time</th><th>Channel</th><th>Outcome</th><th>Latency</th><th>Error kind</th></tr></thead>
            <tbody>${this.deliveries.map(
              (d) => html`<tr>
                <td>${formatTime(d.ts)}</td>
                <td><code>${d.channelId}</code></td>
                <td class="status-${d.outcome}">${d.outcome}</td>
                <td>${d.latencyMs} ms</td>
                <td>${d.errorKind ?? '—'}</td>
              </tr>`,
            )}</tbody>
          </table></div>`
      }`;
  }
}

customElements.define('agentd-channels-page', ChannelsPage);
