import { css, html, LitElement, nothing } from 'lit';
import { ClientError } from '@agentd/client';
import {
  type Connection,
  connect,
  endSession,
  exchangeLoginCode,
  LoginError,
  tokenStore,
} from './connection.js';
import { PAGES, type PageElement, type PageSpec, resolveRoute } from './pages.js';
import { reactiveState } from './internal/reactive-state.js';
import { shared } from './styles.js';
import './login-form.js';

/**
 * The console's shell: the login form until a token is accepted, then the navigation (admin
 * pages only for an admin token) and the page of the location hash, loaded on first visit.
 */
export class AgentdConsole extends LitElement {
  static override properties = reactiveState<AgentdConsole>('conn', 'route', 'loginError', 'busy');
  static override styles = [
    shared,
    css`
      :host { min-height: 100vh; background: #f6f8fa; }
      header {
        display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem;
        padding: 0.5rem 1rem; background: #16202c; color: #fff;
      }
      header .brand { font-weight: 700; margin-right: 0.5rem; }
      nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem; list-style: none; margin: 0; padding: 0; }
      nav a { color: #e6edf3; text-decoration: none; padding: 0.25rem 0.5rem; border-radius: 4px; display: inline-block; }
      nav a[aria-current='page'] { background: #e6edf3; color: #16202c; }
      header .who { margin-left: auto; display: flex; gap: 0.5rem; align-items: center; font-size: 0.85rem; }
      header button.secondary { padding: 0.15rem 0.6rem; }
      main { padding: 1rem; max-width: 1200px; margin: 0 auto; box-sizing: border-box; }
    `,
  ];

  conn: Connection | undefined = undefined;
  route: { page: PageSpec; params: string[] } | undefined = undefined;
  loginError = '';
  busy = false;
  private readonly elements = new Map<string, PageElement>();
  private readonly onHash = () => this.navigate();

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('hashchange', this.onHash);
    const link = /^#login=([\w-]+)$/.exec(window.location.hash);
    if (link?.[1]) {
      // The code leaves the address bar (and the history) before anything else happens.
      window.history.replaceState(null, '', `${window.location.pathname}#/chat`);
      void this.loginWithCode(link[1]);
      return;
    }
    const saved = tokenStore.get();
    if (saved) void this.login(saved);
  }

  private async loginWithCode(code: string): Promise<void> {
    this.busy = true;
    try {
      await this.login(await exchangeLoginCode(code));
    } catch (error) {
      this.loginError = error instanceof LoginError ? error.message : `Login failed: ${String(error)}`;
      this.busy = false;
    }
  }

  override disconnectedCallback(): void {
    window.removeEventListener('hashchange', this.onHash);
    super.disconnectedCallback();
  }

  /** Tries `token`; on success keeps it for this tab and shows the page of the hash. */
  async login(token: string): Promise<void> {
    this.busy = true;
    this.loginError = '';
    try {
      const conn = await connect(token);
      // A token revoked while the tab is open (close 4001) ends the session: back to the form.
      conn.client.on('error', (error) => {
        if (error instanceof ClientError && error.code === 'UNAUTHORIZED' && this.conn === conn) {
          void this.logout().then(() => {
            this.loginError = 'The daemon no longer accepts this token (revoked?). Log in again.';
          });
        }
      });
      this.conn = conn;
      tokenStore.set(token);
      this.navigate();
    } catch (error) {
      tokenStore.clear();
      this.loginError = error instanceof LoginError ? error.message : `Login failed: ${String(error)}`;
    } finally {
      this.busy = false;
    }
  }

  private async logout(): Promise<void> {
    const token = tokenStore.get();
    tokenStore.clear();
    if (token) await endSession(token);
    await this.conn?.close();
    this.conn = undefined;
    this.elements.clear();
  }

  private navigate(): void {
    if (!this.conn) return;
    const route = resolveRoute(window.location.hash, this.conn.admin);
    const conn = this.conn;
    void route.page.load().then(() => {
      let element = this.elements.get(route.page.path);
      if (!element) {
        element = document.createElement(route.page.tag) as PageElement;
        element.conn = conn;
        this.elements.set(route.page.path, element);
      }
      element.params = route.params;
      this.route = route;
      document.title = `${route.page.title} · agentd console`;
    });
  }

  override render() {
    if (!this.conn) {
      return html`<main>
        <agentd-login-form
          .error=${this.loginError}
          .busy=${this.busy}
          @login=${(event: CustomEvent<string>) => this.login(event.detail)}
        ></agentd-login-form>
      </main>`;
    }
    const pages = PAGES.filter((p) => !p.hidden && (this.conn?.admin || !p.admin));
    const current = this.route?.page.path;
    return html`<header>
        <span class="brand">agentd</span>
        <nav aria-label="Pages">
          <ul>
            ${pages.map(
              (p) =>
                html`<li><a href="#/${p.path}" aria-current=${p.path === current ? 'page' : nothing}>${p.title}</a></li>`,
            )}
          </ul>
        </nav>
        <span class="who">
          <span>${this.conn.admin ? 'admin token' : 'rpc token'}</span>
          <button class="secondary" @click=${() => this.logout()}>Log out</button>
        </span>
      </header>
      <main>${this.route ? this.elements.get(this.route.page.path) : nothing}</main>`;
  }
}

customElements.define('agentd-console', AgentdConsole);
