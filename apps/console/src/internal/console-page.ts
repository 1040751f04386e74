import { html, LitElement, nothing, type PropertyDeclarations } from 'lit';
import type { Connection } from '../connection.js';
import type { PageElement } from '../pages.js';
import { shared } from '../styles.js';
import { errorText } from './format.js';
import { PollController } from './poll.js';
import { reactiveState } from './reactive-state.js';

/**
 * What every page of the console shares: the connection and route parameters the shell hands
 * it, the page's error (the last failed call, shown as an alert) and its outcome message (what
 * the last action did, shown as a status line), and the shared styles. A page extends it and
 * declares only its own state; its calls go through {@link ConsolePage.attempt} so a failure
 * is shown the same way on every page.
 */
export class ConsolePage extends LitElement implements PageElement {
  // Typed as Lit's declarations so a page declares its own state, not these again (Lit
  // inherits a superclass's reactive properties).
  static override properties: PropertyDeclarations = {
    params: { attribute: false },
    ...reactiveState<ConsolePage>('error', 'message'),
  };
  static override styles = [shared];

  declare conn: Connection;
  /** Path segments after the page's own (`#/runs/<runId>`): set by the shell before attaching. */
  params: string[] = [];
  error = '';
  message = '';

  /**
   * Runs `work` (the page's calls) and answers its result; on failure the error is shown on the
   * page and the answer is `undefined` (which no JSON-RPC answer is, so the caller can tell). A
   * success clears the error of an earlier failure.
   */
  protected async attempt<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await work();
      this.error = '';
      return result;
    } catch (error) {
      this.error = errorText(error);
      return undefined;
    }
  }

  /**
   * Runs an action whose `work` answers what it did; that line becomes the page's message.
   * Answers whether it succeeded (a failure is shown as the error).
   */
  protected async act(work: () => Promise<string>): Promise<boolean> {
    const done = await this.attempt(work);
    if (done === undefined) return false;
    this.message = done;
    return true;
  }

  /**
   * Keeps a page that shows the record its route names fresh: `refresh` when attached, every
   * `everyMs` while `active` holds, and at once when the shell hands it new route params.
   */
  protected pollRoute(everyMs: number, refresh: () => Promise<void>, active: () => boolean): void {
    new PollController(this, { everyMs, refresh, route: () => this.params, active });
  }

  /** The page's error (`role="alert"`) and outcome message (`role="status"`), each when set. */
  protected renderNotices() {
    return html`${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.message ? html`<p class="ok" role="status">${this.message}</p>` : nothing}`;
  }
}
