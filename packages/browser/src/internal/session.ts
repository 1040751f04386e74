import type { BrowserContext, Page } from 'playwright-core';
import { BrowserError } from '../errors.js';
import type { BrowserLogger } from '../logger.js';
import type { BrowserSection } from '../options.js';
import { isPlaywrightTimeout } from './playwright.js';
import type { AddressPolicy } from './address-policy.js';
import { ConsoleBuffer, consoleLevel } from './console-buffer.js';
import type { GuardProxy } from './guard-proxy.js';

/** One open tab. */
export interface Tab {
  id: string;
  page: Page;
  console: ConsoleBuffer;
}

/** One running browser: its context, process, guard proxy and tabs. */
export interface Session {
  context: BrowserContext;
  /** The profile the browser was launched with (the configured one may have changed since). */
  profileDir: string;
  pid: number | undefined;
  proxy: GuardProxy | undefined;
  tabs: Map<string, Tab>;
  byPage: WeakMap<Page, Tab>;
  focused: string | undefined;
  ended: boolean;
  stopping: boolean;
  probing: Promise<void> | undefined;
}

/**
 * What the per-call operations read from the service: the current section,
 * network policy and session (read through getters, so a live config change
 * applies from the next call), the injected clock, ids and logger, and the
 * service's call wrapper (deadline, abort, error translation).
 */
export interface PageContext {
  readonly config: BrowserSection;
  readonly policy: AddressPolicy | undefined;
  readonly session: Session | undefined;
  readonly now: () => number;
  readonly randomId: () => string;
  readonly logger: BrowserLogger;
  run<T>(
    operation: string,
    call: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined } | undefined,
    work: (current: Session, timeoutMs: number) => Promise<T>,
  ): Promise<T>;
}

/** The first line of a Playwright message, without its colour codes. */
export function firstLine(message: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Playwright colours its call logs with ANSI escapes.
  return (message.split('\n')[0] ?? '').replace(/\u001b\[[0-9;]*m/g, '').trim();
}

export const closedPattern = /has been closed|Target closed|Browser closed|browser has disconnected/i;

/** The tab of `page`, registered with its console buffer and popup, close and crash handlers. */
export function registerPage(ctx: PageContext, current: Session, page: Page): Tab {
  const known = current.byPage.get(page);
  if (known) return known;
  const tab: Tab = {
    id: ctx.randomId(),
    page,
    console: new ConsoleBuffer(ctx.config.maxConsoleEntries, ctx.config.maxTextLength),
  };
  current.tabs.set(tab.id, tab);
  current.byPage.set(page, tab);
  page.on('console', (message) =>
    tab.console.push({ level: consoleLevel(message.type()), text: message.text(), timestamp: ctx.now() }),
  );
  page.on('pageerror', (error) =>
    tab.console.push({
      level: 'error',
      text: `Uncaught ${error.name}: ${error.message}`,
      timestamp: ctx.now(),
    }),
  );
  page.on('popup', (popup) => {
    current.focused = registerPage(ctx, current, popup).id;
  });
  page.on('close', () => {
    current.tabs.delete(tab.id);
    if (current.focused === tab.id) current.focused = [...current.tabs.keys()].at(-1);
  });
  page.on('crash', () =>
    ctx.logger.warn(
      { errorKind: 'dependency', hint: 'the tab renderer crashed; close the tab and open a new one' },
      'browser tab crashed',
    ),
  );
  return tab;
}

/** The focused tab, else the newest one, else a new one. */
export async function focusedTab(ctx: PageContext, current: Session): Promise<Tab> {
  const focused = current.focused === undefined ? undefined : current.tabs.get(current.focused);
  if (focused) return focused;
  const last = [...current.tabs.values()].at(-1);
  if (last) {
    current.focused = last.id;
    return last;
  }
  const tab = registerPage(ctx, current, await current.context.newPage());
  current.focused = tab.id;
  return tab;
}

/** The tab with `tabId`; throws `TAB_NOT_FOUND`. */
export function findTab(current: Session | undefined, tabId: string): Tab {
  const tab = current?.tabs.get(tabId);
  if (!tab) throw new BrowserError('TAB_NOT_FOUND', `Tab not found: ${tabId}`, { data: { tabId } });
  return tab;
}

/** A Playwright failure of `operation` as the BrowserError a caller can act on. */
export function translateError(
  error: unknown,
  operation: string,
  current: Session | undefined,
  timeoutMs: number,
): BrowserError {
  if (error instanceof BrowserError) return error;
  const message = firstLine(String((error as Error)?.message ?? error));
  if (isPlaywrightTimeout(error)) {
    return new BrowserError('TIMEOUT', `${operation} timed out after ${timeoutMs} ms: ${message}`, {
      cause: error,
      data: { operation, timeoutMs },
    });
  }
  if (current?.ended || closedPattern.test(message)) {
    if (current?.stopping) {
      return new BrowserError('CLOSED', `${operation}: the browser was stopped during the call`, {
        cause: error,
      });
    }
    if (current?.ended || current?.context.browser()?.isConnected() === false) {
      return new BrowserError(
        'BROWSER_CRASHED',
        `${operation}: the browser process exited during the call; the next call starts a new one`,
        { cause: error },
      );
    }
    return new BrowserError('ACTION_FAILED', `${operation}: the tab was closed during the call`, {
      cause: error,
    });
  }
  const netError = /net::(ERR_[A-Z_]+)/.exec(message)?.[1];
  if (netError !== undefined) {
    return new BrowserError('NAVIGATION_FAILED', `${operation} failed: ${netError}`, {
      cause: error,
      data: { netError },
    });
  }
  return new BrowserError('ACTION_FAILED', `${operation} failed: ${message}`, { cause: error });
}

/** Runs `work` on a live session within the call's deadline, abortable by the caller. */
export async function runOnSession<T>(
  deps: {
    defaultTimeoutMs: number;
    ensureSession: () => Promise<Session>;
    probe: (current: Session) => void;
  },
  operation: string,
  call: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined } | undefined,
  work: (current: Session, timeoutMs: number) => Promise<T>,
): Promise<T> {
  const timeoutMs = call?.timeoutMs ?? deps.defaultTimeoutMs;
  const signal = call?.signal;
  if (signal?.aborted) throw new BrowserError('ABORTED', `${operation} was aborted`);
  const current = await deps.ensureSession();
  return new Promise<T>((resolvePromise, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const timer = setTimeout(() => {
      finish(() =>
        reject(
          new BrowserError('TIMEOUT', `${operation} timed out after ${timeoutMs} ms`, {
            data: { operation, timeoutMs },
          }),
        ),
      );
      deps.probe(current);
    }, timeoutMs);
    const onAbort = () => finish(() => reject(new BrowserError('ABORTED', `${operation} was aborted`)));
    signal?.addEventListener('abort', onAbort, { once: true });
    work(current, timeoutMs).then(
      (value) => finish(() => resolvePromise(value)),
      (error: unknown) => finish(() => reject(translateError(error, operation, current, timeoutMs))),
    );
  });
}
