import { html, LitElement, nothing } from 'lit';
import { shared } from './styles.js';

/** The token form; emits `login` with the entered token. */
export class LoginForm extends LitElement {
  static override properties = { error: {}, busy: { type: Boolean } };
  static override styles = [shared];
  error = '';
  busy = false;

  private submit(event: SubmitEvent): void {
    event.preventDefault();
    const input = this.renderRoot.querySelector('input') as HTMLInputElement;
    const token = input.value.trim();
    if (token) this.dispatchEvent(new CustomEvent('login', { detail: token }));
  }

  override render() {
    return html`<section class="card" aria-labelledby="login-title">
      <h1 id="login-title">agentd console</h1>
      <p class="muted">
        Enter a token (scope <code>rpc</code>, or <code>admin</code> for every page). It is kept
        in this tab's session storage only.
      </p>
      <form @submit=${this.submit}>
        <div class="row">
          <label>Token <input name="token" type="password" autocomplete="off" required size="40" /></label>
          <button type="submit" ?disabled=${this.busy}>Log in</button>
        </div>
      </form>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
    </section>`;
  }
}

customElements.define('agentd-login-form', LoginForm);
