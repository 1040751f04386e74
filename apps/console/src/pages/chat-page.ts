import type { SessionMessage } from '@agentd/agent-runtime';
import { html, nothing } from 'lit';
import { ConsolePage } from '../internal/console-page.js';
import { errorText, formatTime, json } from '../internal/format.js';
import { reactiveState } from '../internal/reactive-state.js';
import { readEvents } from '../internal/sse.js';

/** A tool call of the streamed turn; `ok` and `durationMs` arrive with its result. */
interface ToolStep {
  toolCallId: string;
  toolName: string;
  ok?: boolean;
  durationMs?: number;
}

/** The turn being streamed: text so far, tool calls, and how it ended. */
interface LiveTurn {
  message: string;
  text: string;
  tools: ToolStep[];
  state: 'streaming' | 'done' | 'error';
  error?: string;
  result?: unknown;
}

/**
 * Chat: pick an agent (an admin token lists them; an rpc token names one or uses the
 * default), send a message, and watch the reply stream in from `GET /api/chat/stream`
 * (server-sent events: `start`, `delta`, `tool`, `done` or `error`), with tool calls folded.
 * The session's history is read with `session.history` over the WebSocket.
 */
export class ChatPage extends ConsolePage {
  static override properties = reactiveState<ChatPage>('agents', 'agentId', 'sessionKey', 'history', 'live');

  agents: string[] = [];
  agentId = '';
  sessionKey = '';
  history: SessionMessage[] = [];
  live: LiveTurn | undefined = undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.params[0]) this.sessionKey = this.params[0];
    void this.loadAgents();
    if (this.sessionKey) void this.loadHistory();
  }

  private async loadAgents(): Promise<void> {
    if (!this.conn.admin) return;
    const answer = await this.attempt(
      () => this.conn.client.call('agents.list') as Promise<{ agents: string[] }>,
    );
    if (answer) this.agents = answer.agents;
  }

  private async loadHistory(): Promise<void> {
    if (!this.sessionKey) return;
    const key = this.sessionKey;
    const answer = await this.attempt(
      () => this.conn.client.call('session.history', { key }) as Promise<{ messages: SessionMessage[] }>,
    );
    this.history = answer?.messages ?? [];
  }

  private async send(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const input = form.querySelector('textarea') as HTMLTextAreaElement;
    const message = input.value.trim();
    if (!message || this.live?.state === 'streaming') return;
    input.value = '';
    this.error = '';
    const query = new URLSearchParams({ message });
    if (this.agentId) query.set('agentId', this.agentId);
    if (this.sessionKey) query.set('sessionKey', this.sessionKey);
    const live: LiveTurn = { message, text: '', tools: [], state: 'streaming' };
    this.live = live;
    try {
      // fetch, not EventSource: the token goes in a header, never in a URL.
      const response = await fetch(`/api/chat/stream?${query}`, {
        headers: { authorization: `Bearer ${this.conn.token}`, accept: 'text/event-stream' },
      });
      if (!response.ok || !response.body) {
        const body = (await response.json().catch(() => ({}))) as { error?: unknown };
        throw body.error ?? new Error(`the chat stream answered HTTP ${response.status}`);
      }
      for await (const { event: name, data } of readEvents(response.body)) this.apply(live, name, data);
    } catch (error) {
      live.state = 'error';
      live.error = errorText(error);
    }
    this.live = { ...live };
    await this.loadHistory();
  }

  private apply(live: LiveTurn, name: string, data: unknown): void {
    const record = (data ?? {}) as Record<string, unknown>;
    if (name === 'start' && typeof record.sessionKey === 'string') this.sessionKey = record.sessionKey;
    else if (name === 'delta') live.text += String(record.text ?? '');
    else if (name === 'tool') {
      const id = String(record.toolCallId);
      const step = live.tools.find((t) => t.toolCallId === id);
      if (record.phase === 'call' && !step)
        live.tools.push({ toolCallId: id, toolName: String(record.toolName) });
      if (record.phase === 'result' && step) {
        step.ok = record.ok === true;
        step.durationMs = Number(record.durationMs);
      }
    } else if (name === 'done') {
      live.state = 'done';
      live.result = data;
    } else if (name === 'error') {
      live.state = 'error';
      live.error = errorText(data);
    }
    this.live = { ...live, tools: [...live.tools] };
  }

  /** A streamed tool call's input and result, from the history once the turn is stored. */
  private toolResult(toolCallId: string) {
    const call = this.history.flatMap((m) => m.toolCalls ?? []).find((c) => c.toolCallId === toolCallId);
    const result = this.history.find((m) => m.role === 'tool' && m.toolCallId === toolCallId);
    if (!call && !result) return html`<p class="muted">Waiting for the result…</p>`;
    return html`${call ? html`<p>Input</p><pre>${json(call.input)}</pre>` : nothing}
      ${result ? html`<p>Result</p><pre>${result.content}</pre>` : nothing}`;
  }

  /** One history message; tool calls and tool results are folded. */
  private renderMessage(m: SessionMessage) {
    const when = html`<span class="muted">${formatTime(m.createdAt)}</span>`;
    if (m.role === 'tool')
      return html`<li><details><summary><strong>tool result</strong> <code>${m.toolName ?? ''}</code>
        ${m.isError ? html`<span class="badge status-failed">error</span>` : nothing} ${when}</summary>
        <pre>${m.content}</pre></details></li>`;
    return html`<li><strong>${m.role}</strong> ${when}
      ${m.content ? html`<pre>${m.content}</pre>` : nothing}
      ${(m.toolCalls ?? []).map(
        (c) =>
          html`<details><summary>tool call <code>${c.toolName}</code></summary><pre>${json(c.input)}</pre></details>`,
      )}</li>`;
  }

  private renderLive(live: LiveTurn) {
    return html`<section class="card" aria-live="polite" aria-busy=${live.state === 'streaming'}>
      <h2>Reply ${live.state === 'streaming' ? html`<span class="badge status-running">streaming</span>` : nothing}</h2>
      <p class="muted">You: ${live.message}</p>
      ${live.tools.map(
        (tool) => html`<details class="tool">
          <summary>
            Tool <code>${tool.toolName}</code>
            ${tool.ok === undefined ? html`<span class="badge status-running">running</span>` : html`<span class="badge ${tool.ok ? 'status-ok' : 'status-failed'}">${tool.ok ? 'ok' : 'failed'}</span>`}
          </summary>
          ${this.toolResult(tool.toolCallId)}
        </details>`,
      )}
      <p data-testid="reply-text">${live.text}</p>
      ${live.error ? html`<p class="error" role="alert">${live.error}</p>` : nothing}
      ${live.result ? html`<details><summary>Turn result</summary><pre>${json(live.result)}</pre></details>` : nothing}
    </section>`;
  }

  override render() {
    return html`<h1>Chat</h1>
      <div class="row">
        ${
          this.conn.admin
            ? html`<label>Agent
              <select @change=${(e: Event) => (this.agentId = (e.target as HTMLSelectElement).value)}>
                <option value="">default</option>
                ${this.agents.map((a) => html`<option value=${a} ?selected=${a === this.agentId}>${a}</option>`)}
              </select>
            </label>`
            : html`<label>Agent id <input placeholder="default" .value=${this.agentId}
              @change=${(e: Event) => (this.agentId = (e.target as HTMLInputElement).value.trim())} /></label>`
        }
        <label>Session key
          <input size="28" placeholder="(this token's own)" .value=${this.sessionKey}
            @change=${(e: Event) => {
              this.sessionKey = (e.target as HTMLInputElement).value.trim();
              void this.loadHistory();
            }} />
        </label>
      </div>
      <form @submit=${this.send}>
        <label class="sr-only" for="message">Message</label>
        <div class="row">
          <textarea id="message" rows="2" cols="50" placeholder="Message" required></textarea>
          <button type="submit" ?disabled=${this.live?.state === 'streaming'}>Send</button>
        </div>
      </form>
      ${this.renderNotices()}
      ${this.live ? this.renderLive(this.live) : nothing}
      <h2>History ${this.sessionKey ? html`<code>${this.sessionKey}</code>` : nothing}</h2>
      ${
        this.history.length === 0
          ? html`<p class="muted">No messages yet.</p>`
          : html`<ol class="history">
            ${this.history.map((m) => this.renderMessage(m))}
          </ol>`
      }`;
  }
}

customElements.define('agentd-chat-page', ChatPage);
