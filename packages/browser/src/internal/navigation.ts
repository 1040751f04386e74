import type { Page, Request } from 'playwright-core';
import type { NavigateResult } from '../browser-service.js';
import { BrowserError } from '../errors.js';
import type { AddressPolicy } from './address-policy.js';
import { BLOCKED_HEADER } from './guard-proxy.js';
import type { Session, Tab } from './session.js';

/**
 * The URL when it is absolute http(s) and the network policy allows its host;
 * throws `INVALID_URL`, `NAVIGATION_BLOCKED` or (unresolvable) `NAVIGATION_FAILED`.
 */
export async function checkUrl(policy: AddressPolicy | undefined, raw: string, field = 'url'): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BrowserError('INVALID_URL', `${field}: not an absolute URL`, { data: { field } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BrowserError(
      'INVALID_URL',
      `${field}: only http and https URLs may be opened, not ${url.protocol}`,
      {
        data: { field, scheme: url.protocol.replace(/:$/, '') },
      },
    );
  }
  if (policy) {
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const decision = await policy.check(url.hostname, port);
    if (!decision.allowed) {
      if (decision.unresolved) {
        throw new BrowserError(
          'NAVIGATION_FAILED',
          `navigate failed: ERR_NAME_NOT_RESOLVED (${url.hostname})`,
          {
            data: { netError: 'ERR_NAME_NOT_RESOLVED', host: url.hostname },
          },
        );
      }
      throw blocked(url.hostname, decision.reason, field);
    }
  }
  return url;
}

/** The error of a navigation the network policy refused. */
export function blocked(host: string, reason: string, field = 'url'): BrowserError {
  return new BrowserError(
    'NAVIGATION_BLOCKED',
    `${field}: navigation blocked: ${reason} (set browser.allowPrivateNetwork or list the host in browser.allowedHosts to allow it)`,
    { data: { field, host, reason } },
  );
}

/** Navigates `tab`, naming the guard proxy's block when the policy stopped the navigation. */
export async function goto(
  now: () => number,
  current: Session,
  tab: Tab,
  url: URL,
  waitUntil: 'load' | 'domcontentloaded' | 'commit',
  timeoutMs: number,
): Promise<NavigateResult> {
  const began = now();
  let response: Awaited<ReturnType<Page['goto']>>;
  // The hop that failed names the block that stopped this navigation; "the latest block"
  // alone can be a late retry of an earlier navigation's blocked request.
  let failedHop: URL | undefined;
  const onRequestFailed = (request: Request): void => {
    if (request.isNavigationRequest() && request.frame() === tab.page.mainFrame()) {
      failedHop = new URL(request.url());
    }
  };
  tab.page.on('requestfailed', onRequestFailed);
  try {
    response = await tab.page.goto(url.href, { timeout: timeoutMs, waitUntil }).catch((error: unknown) => {
      // An earlier failed navigation's error page committed later than the wait below allowed
      // (a loaded machine) and cut this one off before it began: this one is simply run again.
      if (!/interrupted by another navigation to "chrome-error:/.test(String((error as Error)?.message)))
        throw error;
      return tab.page.goto(url.href, { timeout: timeoutMs, waitUntil });
    });
  } catch (error) {
    if (/net::ERR_/.test(String((error as Error)?.message))) {
      // Chromium commits its error page a moment after reporting the failure; waiting for
      // it keeps that late commit from cutting off the caller's next navigation.
      await tab.page
        .waitForURL((target) => target.protocol === 'chrome-error:', { timeout: 1000, waitUntil: 'commit' })
        .catch(() => undefined);
    }
    const hopPort = failedHop
      ? Number(failedHop.port) || (failedHop.protocol === 'https:' ? 443 : 80)
      : undefined;
    const record = failedHop
      ? (current.proxy?.lastBlock(failedHop.hostname.replace(/^\[|\]$/g, ''), hopPort) ??
        current.proxy?.latestBlockSince(began))
      : current.proxy?.latestBlockSince(began);
    if (record && /ERR_TUNNEL_CONNECTION_FAILED|ERR_BLOCKED/.test(String((error as Error)?.message))) {
      throw blocked(record.host, record.reason);
    }
    throw error;
  } finally {
    tab.page.off('requestfailed', onRequestFailed);
  }
  const refusal = response?.headers()[BLOCKED_HEADER];
  if (refusal !== undefined && current.proxy) {
    throw blocked(new URL(response?.url() ?? url.href).hostname, decodeURIComponent(refusal));
  }
  return {
    tabId: tab.id,
    url: tab.page.url(),
    title: await titleOf(tab.page),
    status: response?.status() ?? null,
  };
}

/** The page's title; empty while it navigates (there is no document to ask then). */
export async function titleOf(page: Page): Promise<string> {
  return page.title().catch(() => '');
}
