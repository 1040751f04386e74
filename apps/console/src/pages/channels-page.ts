import type { ChannelListing, ChannelsService, DeliveryStage, StageCounts } from '@agentd/channels';
import type { DeliveryTrace } from '@agentd/obs-reports';
import { html, nothing } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { errorText, formatTime, json } from '../internal/format.js';
import { PollController } from '../internal/poll.js';
import { reactiveState } from '../internal/reactive-state.js';
import { dataTable } from '../internal/templates.js';

/** The stages of the delivery queue, in the order a message passes them. */
const STAGES: readonly DeliveryStage[] = ['queued', 'sending', 'sent', 'failed', 'deadLetter'];

/** `channels.status` of one channel type; the service also counts the senders it refused. */
type ChannelStatus = Awaited<ReturnType<ChannelsService['status']>>[number] & { refused: number };

/** A platform's status, or why it could not be read. */
type Row = { listing: ChannelListing; status?: ChannelStatus; error?: string };

/**
 * Channels (admin): every channel type (webchat and the four platforms) with its status and
 * adapter health, the delivery queue by stage (overall and per channel), and the most recent
 * delivery traces. Refreshes every five seconds.
 */
export class ChannelsPage extends ConsolePage {
  static override properties = reactiveState<ChannelsPage>('rows', 'queue', 'deliveries');

  rows: Row[] = [];
  queue: StageCounts | undefined = undefined;
  deliveries: DeliveryTrace[] = [];

  constructor() {
    super();
    new PollController(this, { everyMs: 5000, refresh: () => this.refresh() });
  }

  private async refresh(): Promise<void> {
    const client = this.conn.client;
    await this.attempt(async () => {
      const [{ channels }, queue, { deliveries }] = await Promise.all([
        client.call('channels.list') as Promise<{ channels: ChannelListing[] }>,
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
    });
  }

  private renderCounts(counts: StageCounts, label: string, testId: string) {
    return dataTable(
      { label, columns: STAGES, testId },
      html`<tr>${STAGES.map((s) => html`<td class=${counts[s] ? `status-${s}` : ''} data-stage=${s}>${counts[s] ?? 0}</td>`)}</tr>`,
    );
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
      ${this.renderNotices()}
      <div class="row"><button @click=${() => this.refresh()}>Refresh</button></div>
      <h2>Delivery queue</h2>
      ${this.queue ? this.renderCounts(this.queue, 'Delivery queue by stage', 'queue-all') : nothing}
      <h2>Channel types</h2>
      ${this.rows.map((row) => this.renderChannel(row))}
      <h2>Recent deliveries</h2>
      ${
        this.deliveries.length === 0
          ? html`<p class="muted">No delivery recorded yet.</p>`
          : dataTable(
              {
                label: 'Recent deliveries',
                columns: ['Time', 'Channel', 'Outcome', 'Latency', 'Error kind'],
              },
              this.deliveries.map(
                (d) => html`<tr>
                  <td>${formatTime(d.ts)}</td>
                  <td><code>${d.channelId}</code></td>
                  <td class="status-${d.outcome}">${d.outcome}</td>
                  <td>${d.latencyMs} ms</td>
                  <td>${d.errorKind ?? '—'}</td>
                </tr>`,
              ),
            )
      }`;
  }
}

customElements.define('agentd-channels-page', ChannelsPage);
