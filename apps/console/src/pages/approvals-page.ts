import type { PendingApproval } from '@agentd/approvals';
import { html, nothing } from 'lit';
import { reactiveState } from '../internal/reactive-state.js';
import { ConsolePage } from '../internal/console-page.js';

/**
 * Approvals (admin): the tool calls waiting for an operator, kept live by the
 * `approval.requested` / `approval.resolved` notifications; approve or deny each with a reason.
 */
export class ApprovalsPage extends ConsolePage {
  static override properties = reactiveState<ApprovalsPage>('requests', 'decided');

  requests: PendingApproval[] = [];
  decided: string[] = [];
  private unsubscribe: Array<() => void> = [];

  override connectedCallback(): void {
    super.connectedCallback();
    const reload = () => void this.load();
    this.unsubscribe = [
      this.conn.client.on('approval.requested', reload),
      this.conn.client.on('approval.resolved', reload),
      this.conn.client.on('open', reload),
    ];
    reload();
  }

  override disconnectedCallback(): void {
    for (const off of this.unsubscribe.splice(0)) off();
    super.disconnectedCallback();
  }

  private async load(): Promise<void> {
    const answer = await this.attempt(
      () => this.conn.client.call('admin.approval.pending') as Promise<{ requests: PendingApproval[] }>,
    );
    if (answer) this.requests = answer.requests;
  }

  private async resolve(request: PendingApproval, approved: boolean): Promise<void> {
    const input = this.renderRoot.querySelector(
      `#reason-${CSS.escape(request.id)}`,
    ) as HTMLInputElement | null;
    const reason = input?.value.trim();
    const answer = await this.attempt(
      () =>
        this.conn.client.call('admin.approval.resolve', {
          id: request.id,
          approved,
          ...(reason ? { reason } : {}),
        }) as Promise<{ reason?: string }>,
    );
    if (!answer) return;
    const line = `${approved ? 'Approved' : 'Denied'} ${request.toolName} (${request.id})`;
    this.decided = [answer.reason ? `${line}: ${answer.reason}` : line, ...this.decided].slice(0, 10);
    await this.load();
  }

  override render() {
    return html`<h1>Approvals</h1>
      <p class="muted">Tool calls waiting for an operator. The list updates as requests arrive and are decided.</p>
      ${this.renderNotices()}
      ${this.requests.length === 0 ? html`<p>No tool call is waiting for approval.</p>` : nothing}
      ${this.requests.map(
        (r) => html`<section class="card" aria-label="Approval request ${r.id}">
          <h2><code>${r.toolName}</code> <span class="badge status-waiting">waiting</span></h2>
          <p>Agent <code>${r.agentId}</code>, session <code>${r.sessionKey}</code>, waiting ${Math.round(r.ageMs / 1000)} s
            ${r.waiting > 1 ? html`(${r.waiting} calls)` : nothing}</p>
          <details><summary>Arguments (${r.argsDigest.bytes} bytes)</summary><pre>${r.argsDigest.preview}</pre>
            <p class="muted">sha256 ${r.argsDigest.sha256}</p></details>
          <div class="row">
            <label>Reason <input id="reason-${r.id}" maxlength="1000" placeholder="optional" /></label>
            <button @click=${() => this.resolve(r, true)}>Approve</button>
            <button class="danger" @click=${() => this.resolve(r, false)}>Deny</button>
          </div>
        </section>`,
      )}
      ${
        this.decided.length > 0
          ? html`<h2>Decided here</h2><ul>${this.decided.map((d) => html`<li>${d}</li>`)}</ul>`
          : nothing
      }`;
  }
}

customElements.define('agentd-approvals-page', ApprovalsPage);
