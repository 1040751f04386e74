import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type BrowserContext,
  chromium,
  type Page,
  type Request,
  errors as playwrightErrors,
} from 'playwright-core';
import { BrowserError } from './errors.js';
import { type ActAction, type ActParams, checkActParams, performAction } from './internal/actions.js';
import { type AddressPolicy, createAddressPolicy } from './internal/address-policy.js';
import { type ConsoleEntry, ConsoleBuffer, consoleLevel } from './internal/console-buffer.js';
import { findExecutable, installHint } from './internal/executable.js';
import { BLOCKED_HEADER, type GuardProxy, startGuardProxy } from './internal/guard-proxy.js';
import { findProcesses, isAlive, killTree, parentPid } from './internal/processes.js';
import { launchSettingsChanged, parseOptions } from './internal/settings.js';
import { boundSnapshot, boundSnapshotText, type SnapshotNode } from './internal/snapshot.js';
import { type BrowserLogger, noopLogger } from './logger.js';
import type { BrowserServiceOptions } from './options.js';

/** Per-call options every operation accepts. */
export interface CallOptions {
  /** Aborts the call (the browser keeps running). */
  signal?: AbortSignal | undefined;
  /** Overrides the service's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
}

/** `browser.status`. */
export interface BrowserStatus {
  running: boolean;
  /** URL of the focused tab. */
  url?: string;
  tabCount?: number;
}

/** `browser.navigate`: where the tab ended up after redirects. */
export interface NavigateResult {
  tabId: string;
  url: string;
  title: string;
  /** HTTP status of the final response; null when there was none (same-document navigation). */
  status: number | null;
}

/** `browser.snapshot` in the default `tree` format. */
export interface SnapshotResult {
  tabId: string;
  url: string;
  title: string;
  nodes: SnapshotNode[];
  nodeCount: number;
  truncated: boolean;
}

/** `browser.snapshot` in the `text` format (Playwright's YAML aria snapshot with `[ref=…]`). */
export interface SnapshotTextResult {
  tabId: string;
  url: string;
  title: string;
  text: string;
  truncated: boolean;
}

/** `browser.act`. */
export interface ActResult {
  ok: true;
  action: ActAction;
  tabId: string;
  url: string;
  title: string;
  /** Tabs the action opened (popups, `target=_blank` links); the first of them now has focus. */
  openedTabIds?: string[];
  /** `select`: the values now selected. */
  selected?: string[];
  /** `scroll`: the vertical scroll position after scrolling. */
  scrollY?: number;
}

/** One tab of `browser.tabs`. */
export interface TabInfo {
  id: string;
  url: string;
  title: string;
  focused: boolean;
}

/** The browser of one daemon: launched on first use, one tab focused at a time. */
export interface BrowserService {
  /** The profile directory (`--user-data-dir`) of this service's browser. */
  readonly profileDir: string;
  /** Pid of the running browser's main process (Linux), for diagnostics and RSS figures. */
  readonly pid: number | undefined;
  status(): Promise<BrowserStatus>;
  /** Launches the browser; no effect when it is running. */
  start(call?: CallOptions): Promise<{ started: true }>;
  /** Closes every tab and ends the browser process (killed if it does not exit). */
  stop(): Promise<{ stopped: true }>;
  navigate(
    params: { url: string; waitUntil?: 'load' | 'domcontentloaded' | 'commit' | undefined },
    call?: CallOptions,
  ): Promise<NavigateResult>;
  snapshot(params?: { format?: 'tree' | undefined }, call?: CallOptions): Promise<SnapshotResult>;
  snapshot(params: { format: 'text' }, call?: CallOptions): Promise<SnapshotTextResult>;
  snapshot(
    params?: { format?: 'tree' | 'text' | undefined },
    call?: CallOptions,
  ): Promise<SnapshotResult | SnapshotTextResult>;
  screenshot(params?: { fullPage?: boolean | undefined }, call?: CallOptions): Promise<{ data: string }>;
  pdf(call?: CallOptions): Promise<{ data: string }>;
  act(params: ActParams, call?: CallOptions): Promise<ActResult>;
  tabs(call?: CallOptions): Promise<{ tabs: TabInfo[] }>;
  /** Opens a tab (blank, or at `url`) and focuses it. */
  open(params?: { url?: string | undefined }, call?: CallOptions): Promise<{ tabId: string }>;
  focus(params: { tabId: string }, call?: CallOptions): Promise<{ focused: true; tabId: string }>;
  close(params: { tabId: string }, call?: CallOptions): Promise<{ closed: true; tabId: string }>;
  /** Console entries of the focused tab, oldest first. */
  console(call?: CallOptions): Promise<{ entries: ConsoleEntry[]; dropped: number; tabId?: string }>;
  /** Stops the browser and refuses further calls with `CLOSED`. */
  shutdown(): Promise<void>;
  /**
   * Applies a new `browser` section in place. Per-call keys (timeouts, snapshot, text and console
   * limits) apply from the next call; a change to a key the browser was launched with (executable,
   * profile, private-network policy, viewport, extra switches) stops a running browser, so the next
   * call launches it with the new section. `relaunched` tells whether a running browser was stopped.
   * @throws {BrowserError} `INVALID_OPTIONS` when the section fails validation (nothing changes then).
   */
  applyConfig(section: BrowserServiceOptions): Promise<{ relaunched: boolean }>;
}

interface Tab {
  id: string;
  page: Page;
  console: ConsoleBuffer;
}

interface Session {
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

// Headless flags a locked-down machine (root, no GPU, no network beyond what is allowed) needs.
// The background-networking set keeps Chromium from calling home on a closed network.
const HEADLESS_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

function firstLine(message: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Playwright colours its call logs with ANSI escapes.
  return (message.split('\n')[0] ?? '').replace(/\u001b\[[0-9;]*m/g, '').trim();
}

const closedPattern = /has been closed|Target closed|Browser closed|browser has disconnected/i;

/**
 * Creates the browser service. Nothing is launched until a call needs the browser.
 *
 * @throws {BrowserError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createBrowserService(options: BrowserServiceOptions = {}): BrowserService {
  let config = parseOptions(options);
  const logger: BrowserLogger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? (() => randomBytes(4).toString('hex'));
  // Without a data dir the profile lives in a temp dir this service owns and removes.
  const ownedBase = config.dataDir === undefined ? mkdtempSync(join(tmpdir(), 'agentd-browser-')) : undefined;
  const base = config.dataDir ?? (ownedBase as string);
  const profileDirOf = (section: typeof config) =>
    resolve(isAbsolute(section.profileDir) ? section.profileDir : join(base, section.profileDir));
  const policyOf = (section: typeof config): AddressPolicy | undefined =>
    section.allowPrivateNetwork
      ? undefined
      : createAddressPolicy({ allowedHosts: section.allowedHosts, resolveHost: options.resolveHost });
  let profileDir = profileDirOf(config);
  let policy = policyOf(config);

  let session: Session | undefined;
  let launching: Promise<Session> | undefined;
  let stopping: Promise<void> | undefined;
  let shutDown = false;

  // The sweep of an ended session kills every process carrying the profile dir; a launch must
  // wait for it, or the sweep (still looping on a slow machine) kills the new browser too.
  let pendingSweep: Promise<void> = Promise.resolve();
  const sweepProcesses = (pid: number | undefined, dir: string): Promise<void> => {
    const sweep = pendingSweep.then(() => sweepOnce(pid, dir));
    pendingSweep = sweep.catch(() => undefined);
    return sweep;
  };
  const sweepOnce = async (pid: number | undefined, dir: string): Promise<void> => {
    if (pid !== undefined) killTree(pid);
    // Children outside the group (or a group we could not identify) carry the profile dir.
    for (let attempt = 0; attempt < 40; attempt++) {
      const left = findProcesses(dir).filter((candidate) => candidate !== process.pid);
      if (left.length === 0 && (pid === undefined || !isAlive(pid))) return;
      for (const candidate of left) killTree(candidate);
      await sleep(50);
    }
  };

  const endSession = (current: Session, why: 'stopped' | 'crashed' | 'unresponsive'): void => {
    if (current.ended) return;
    current.ended = true;
    if (session === current) session = undefined;
    if (why !== 'stopped') {
      logger.warn(
        {
          errorKind: 'dependency',
          reason: why,
          hint:
            why === 'crashed'
              ? 'the browser process exited; the next browser call starts a new one'
              : 'the browser stopped answering and was killed; the next browser call starts a new one',
        },
        why === 'crashed' ? 'browser exited unexpectedly' : 'browser unresponsive, killed',
      );
    }
    void sweepProcesses(current.pid, current.profileDir);
    void current.proxy?.close();
  };

  const registerPage = (current: Session, page: Page): Tab => {
    const known = current.byPage.get(page);
    if (known) return known;
    const tab: Tab = {
      id: randomId(),
      page,
      console: new ConsoleBuffer(config.maxConsoleEntries, config.maxTextLength),
    };
    current.tabs.set(tab.id, tab);
    current.byPage.set(page, tab);
    page.on('console', (message) =>
      tab.console.push({ level: consoleLevel(message.type()), text: message.text(), timestamp: now() }),
    );
    page.on('pageerror', (error) =>
      tab.console.push({
        level: 'error',
        text: `Uncaught ${error.name}: ${error.message}`,
        timestamp: now(),
      }),
    );
    page.on('popup', (popup) => {
      current.focused = registerPage(current, popup).id;
    });
    page.on('close', () => {
      current.tabs.delete(tab.id);
      if (current.focused === tab.id) current.focused = [...current.tabs.keys()].at(-1);
    });
    page.on('crash', () =>
      logger.warn(
        { errorKind: 'dependency', hint: 'the tab renderer crashed; close the tab and open a new one' },
        'browser tab crashed',
      ),
    );
    return tab;
  };

  const launch = async (): Promise<Session> => {
    await pendingSweep;
    const began = now();
    const executablePath = findExecutable(config.executablePath);
    const launchDir = profileDir;
    if (!config.keepProfile) rmSync(launchDir, { recursive: true, force: true });
    mkdirSync(launchDir, { recursive: true });
    const proxy = policy ? await startGuardProxy({ policy, logger, now }) : undefined;
    let context: BrowserContext;
    try {
      context = await chromium.launchPersistentContext(launchDir, {
        executablePath,
        headless: true,
        chromiumSandbox: false,
        args: [...HEADLESS_ARGS, ...config.extraArgs],
        viewport: config.viewport,
        acceptDownloads: false,
        timeout: config.launchTimeoutMs,
        // The daemon owns its signals (SIGHUP reloads config); it stops the browser itself.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
        ...(proxy ? { proxy: { server: proxy.url } } : {}),
      });
    } catch (error) {
      await proxy?.close();
      await sweepProcesses(undefined, launchDir);
      throw new BrowserError(
        'LAUNCH_FAILED',
        `the browser at ${executablePath} did not start: ${firstLine(String((error as Error)?.message ?? error))}. ${installHint}`,
        { cause: error, data: { executablePath } },
      );
    }
    const pid = findProcesses(launchDir).find((candidate) => parentPid(candidate) === process.pid);
    const current: Session = {
      context,
      profileDir: launchDir,
      pid,
      proxy,
      tabs: new Map(),
      byPage: new WeakMap(),
      focused: undefined,
      ended: false,
      stopping: false,
      probing: undefined,
    };
    context.on('page', (page) => void registerPage(current, page));
    context.on('close', () => endSession(current, current.stopping ? 'stopped' : 'crashed'));
    for (const page of context.pages()) registerPage(current, page);
    current.focused = [...current.tabs.keys()][0];
    logger.info(
      { durationMs: now() - began, pid, step: 'launch', success: true },
      `browser started (${executablePath})`,
    );
    return current;
  };

  const ensureSession = async (): Promise<Session> => {
    if (shutDown) throw new BrowserError('CLOSED', 'the browser service was shut down');
    await stopping;
    const current = session;
    if (current?.probing) await current.probing;
    if (session && !session.ended && session.context.browser()?.isConnected() !== false) return session;
    if (session) endSession(session, 'crashed');
    launching ??= launch()
      .then((fresh) => {
        session = fresh;
        return fresh;
      })
      .finally(() => {
        launching = undefined;
      });
    return launching;
  };

  const focusedTab = async (current: Session): Promise<Tab> => {
    const focused = current.focused === undefined ? undefined : current.tabs.get(current.focused);
    if (focused) return focused;
    const last = [...current.tabs.values()].at(-1);
    if (last) {
      current.focused = last.id;
      return last;
    }
    const tab = registerPage(current, await current.context.newPage());
    current.focused = tab.id;
    return tab;
  };

  const findTab = (current: Session | undefined, tabId: string): Tab => {
    const tab = current?.tabs.get(tabId);
    if (!tab) throw new BrowserError('TAB_NOT_FOUND', `Tab not found: ${tabId}`, { data: { tabId } });
    return tab;
  };

  // A call that outlived its deadline may mean the browser hangs: one cheap CDP round trip
  // tells. No answer within probeTimeoutMs and the process is killed; the next call relaunches.
  const probe = (current: Session): void => {
    if (current.ended || current.probing) return;
    current.probing = (async () => {
      const answered = await Promise.race([
        (async () => {
          const browser = current.context.browser();
          if (!browser) return true;
          const cdp = await browser.newBrowserCDPSession();
          await cdp.send('Browser.getVersion');
          await cdp.detach().catch(() => undefined);
          return true;
        })().catch(() => false),
        sleep(config.probeTimeoutMs).then(() => false),
      ]);
      if (!answered && !current.ended) {
        endSession(current, 'unresponsive');
        await sweepProcesses(current.pid, current.profileDir);
      }
    })().finally(() => {
      current.probing = undefined;
    });
  };

  const translate = (error: unknown, operation: string, current: Session | undefined, timeoutMs: number) => {
    if (error instanceof BrowserError) return error;
    const message = firstLine(String((error as Error)?.message ?? error));
    if (error instanceof playwrightErrors.TimeoutError) {
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
  };

  /** Runs `work` on a live session within the call's deadline, abortable by the caller. */
  const run = async <T>(
    operation: string,
    call: CallOptions | undefined,
    work: (current: Session, timeoutMs: number) => Promise<T>,
  ): Promise<T> => {
    const timeoutMs = call?.timeoutMs ?? config.timeoutMs;
    const signal = call?.signal;
    if (signal?.aborted) throw new BrowserError('ABORTED', `${operation} was aborted`);
    const current = await ensureSession();
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
        probe(current);
      }, timeoutMs);
      const onAbort = () => finish(() => reject(new BrowserError('ABORTED', `${operation} was aborted`)));
      signal?.addEventListener('abort', onAbort, { once: true });
      work(current, timeoutMs).then(
        (value) => finish(() => resolvePromise(value)),
        (error: unknown) => finish(() => reject(translate(error, operation, current, timeoutMs))),
      );
    });
  };

  const checkUrl = async (raw: string, field = 'url'): Promise<URL> => {
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
  };

  const blocked = (host: string, reason: string, field = 'url') =>
    new BrowserError(
      'NAVIGATION_BLOCKED',
      `${field}: navigation blocked: ${reason} (set browser.allowPrivateNetwork or list the host in browser.allowedHosts to allow it)`,
      { data: { field, host, reason } },
    );

  const goto = async (
    current: Session,
    tab: Tab,
    url: URL,
    waitUntil: 'load' | 'domcontentloaded' | 'commit',
    timeoutMs: number,
  ): Promise<NavigateResult> => {
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
      response = await tab.page.goto(url.href, { timeout: timeoutMs, waitUntil });
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
  };

  const stop = async (): Promise<{ stopped: true }> => {
    if (stopping) {
      await stopping;
      return { stopped: true };
    }
    stopping = (async () => {
      const current = session ?? (await launching?.catch(() => undefined));
      if (!current) return;
      current.stopping = true;
      const began = now();
      await Promise.race([current.context.close().catch(() => undefined), sleep(5000)]);
      endSession(current, 'stopped');
      await sweepProcesses(current.pid, current.profileDir);
      await current.proxy?.close();
      logger.info({ durationMs: now() - began, step: 'stop' }, 'browser stopped');
    })().finally(() => {
      stopping = undefined;
    });
    await stopping;
    return { stopped: true };
  };

  function snapshot(params?: { format?: 'tree' | undefined }, call?: CallOptions): Promise<SnapshotResult>;
  function snapshot(params: { format: 'text' }, call?: CallOptions): Promise<SnapshotTextResult>;
  function snapshot(
    params?: { format?: 'tree' | 'text' | undefined },
    call?: CallOptions,
  ): Promise<SnapshotResult | SnapshotTextResult>;
  function snapshot(
    params: { format?: 'tree' | 'text' | undefined } = {},
    call?: CallOptions,
  ): Promise<SnapshotResult | SnapshotTextResult> {
    return run('snapshot', call, async (current, timeoutMs) => {
      const tab = await focusedTab(current);
      const head = { tabId: tab.id, url: tab.page.url(), title: await titleOf(tab.page) };
      if (params.format === 'text') {
        const yaml = await tab.page.ariaSnapshot({ mode: 'ai', timeout: timeoutMs });
        return {
          ...head,
          ...boundSnapshotText(yaml, {
            maxLines: config.maxSnapshotNodes,
            maxLineLength: config.maxTextLength,
          }),
        };
      }
      const tree = await tab.page.ariaSnapshotJSON({ mode: 'ai', timeout: timeoutMs });
      return {
        ...head,
        ...boundSnapshot(tree, { maxNodes: config.maxSnapshotNodes, maxTextLength: config.maxTextLength }),
      };
    });
  }

  return {
    get profileDir() {
      return profileDir;
    },
    get pid() {
      return session?.pid;
    },

    async status() {
      const current = session;
      if (!current || current.ended || current.context.browser()?.isConnected() === false)
        return { running: false };
      const focused = current.focused === undefined ? undefined : current.tabs.get(current.focused);
      return {
        running: true,
        tabCount: current.tabs.size,
        ...(focused ? { url: focused.page.url() } : {}),
      };
    },

    async start() {
      await ensureSession();
      return { started: true };
    },

    stop,

    async navigate(params, call) {
      const url = await checkUrl(params.url);
      return run('navigate', call, async (current, timeoutMs) => {
        const tab = await focusedTab(current);
        return goto(current, tab, url, params.waitUntil ?? 'load', timeoutMs);
      });
    },

    snapshot,

    screenshot(params = {}, call) {
      return run('screenshot', call, async (current, timeoutMs) => {
        const tab = await focusedTab(current);
        const png = await tab.page.screenshot({
          type: 'png',
          fullPage: params.fullPage ?? false,
          timeout: timeoutMs,
        });
        return { data: png.toString('base64') };
      });
    },

    pdf(call) {
      return run('pdf', call, async (current) => {
        const tab = await focusedTab(current);
        const pdf = await tab.page.pdf({ printBackground: true });
        return { data: pdf.toString('base64') };
      });
    },

    async act(params, call) {
      checkActParams(params);
      return run(`act ${params.action}`, call, async (current, timeoutMs) => {
        const tab = await focusedTab(current);
        if (params.ref !== undefined && (await tab.page.getByRef(params.ref).count()) === 0) {
          throw new BrowserError(
            'REF_NOT_FOUND',
            `ref: ${params.ref} names no element of the latest snapshot of this tab; take a new snapshot`,
            { data: { field: 'ref', ref: params.ref } },
          );
        }
        const before = new Set(current.tabs.keys());
        const extra = await performAction(tab.page, params, timeoutMs);
        const opened = [...current.tabs.keys()].filter((id) => !before.has(id));
        const focused = await focusedTab(current);
        return {
          ok: true as const,
          action: params.action,
          tabId: tab.id,
          url: focused.page.url(),
          title: await titleOf(focused.page),
          ...(opened.length > 0 ? { openedTabIds: opened } : {}),
          ...extra,
        };
      });
    },

    async tabs(call) {
      if (!session || session.ended) return { tabs: [] };
      return run('tabs', call, async (current) => {
        const tabs: TabInfo[] = [];
        for (const tab of current.tabs.values()) {
          tabs.push({
            id: tab.id,
            url: tab.page.url(),
            title: await titleOf(tab.page),
            focused: tab.id === current.focused,
          });
        }
        return { tabs };
      });
    },

    async open(params = {}, call) {
      const url = params.url === undefined ? undefined : await checkUrl(params.url);
      return run('open', call, async (current, timeoutMs) => {
        const tab = registerPage(current, await current.context.newPage());
        const previous = current.focused;
        current.focused = tab.id;
        if (url) {
          try {
            await goto(current, tab, url, 'load', timeoutMs);
          } catch (error) {
            // A tab whose first navigation failed would be an orphan the caller never learnt the id of.
            current.focused = previous;
            await tab.page.close().catch(() => undefined);
            throw error;
          }
        }
        return { tabId: tab.id };
      });
    },

    async focus(params, call) {
      findTab(session, params.tabId);
      return run('focus', call, async (current) => {
        const tab = findTab(current, params.tabId);
        await tab.page.bringToFront();
        current.focused = tab.id;
        return { focused: true as const, tabId: tab.id };
      });
    },

    async close(params, call) {
      findTab(session, params.tabId);
      return run('close', call, async (current) => {
        const tab = findTab(current, params.tabId);
        await tab.page.close();
        current.tabs.delete(tab.id);
        if (current.focused === tab.id) current.focused = [...current.tabs.keys()].at(-1);
        return { closed: true as const, tabId: tab.id };
      });
    },

    async console() {
      const current = session;
      const tab = current?.focused === undefined ? undefined : current.tabs.get(current.focused);
      if (!tab) return { entries: [], dropped: 0 };
      return { ...tab.console.read(), tabId: tab.id };
    },

    async shutdown() {
      shutDown = true;
      await stop();
      if (ownedBase) rmSync(ownedBase, { recursive: true, force: true });
    },

    async applyConfig(section) {
      const next = parseOptions({ ...section, dataDir: config.dataDir });
      const relaunch = launchSettingsChanged(config, next);
      // Set before stopping: a call waiting on the stop launches with the new section.
      config = next;
      profileDir = profileDirOf(next);
      policy = policyOf(next);
      const running = session !== undefined || launching !== undefined;
      if (relaunch && running) await stop();
      return { relaunched: relaunch && running };
    },
  };
}

async function titleOf(page: Page): Promise<string> {
  // A page in the middle of navigating has no document to ask; an empty title is the truth then.
  return page.title().catch(() => '');
}
