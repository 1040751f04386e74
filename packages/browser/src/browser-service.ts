import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrowserContext } from 'playwright-core';
import { BrowserError } from './errors.js';
import type { ActAction, ActParams } from './internal/actions.js';
import { type AddressPolicy, createAddressPolicy } from './internal/address-policy.js';
import type { ConsoleEntry } from './internal/console-buffer.js';
import { findExecutable, HEADLESS_ARGS, installHint } from './internal/executable.js';
import { startGuardProxy } from './internal/guard-proxy.js';
import { loadPlaywright } from './internal/playwright.js';
import { findProcesses, isAlive, killTree, parentPid } from './internal/processes.js';
import { createPageCalls } from './internal/page-calls.js';
import { launchSettingsChanged, parseOptions } from './internal/settings.js';
import { firstLine, type PageContext, registerPage, runOnSession, type Session } from './internal/session.js';
import type { SnapshotNode } from './internal/snapshot.js';
import { type BrowserLogger, noopLogger } from './logger.js';
import type { BrowserSection, BrowserServiceOptions, ResolveHost } from './options.js';

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
  const profileDirOf = (section: BrowserSection) => profileDirIn(base, section);
  const policyOf = (section: BrowserSection) => addressPolicyFor(section, options.resolveHost);
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
      const { chromium } = await loadPlaywright();
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
    context.on('page', (page) => void registerPage(pages, current, page));
    context.on('close', () => endSession(current, current.stopping ? 'stopped' : 'crashed'));
    for (const page of context.pages()) registerPage(pages, current, page);
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

  /** Runs `work` on a live session within the call's deadline, abortable by the caller. */
  const run: PageContext['run'] = (operation, call, work) =>
    runOnSession({ defaultTimeoutMs: config.timeoutMs, ensureSession, probe }, operation, call, work);

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

  const pages: PageContext = {
    get config() {
      return config;
    },
    get policy() {
      return policy;
    },
    get session() {
      return session;
    },
    now,
    randomId,
    logger,
    run,
  };
  const pageCalls = createPageCalls(pages);

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

    ...pageCalls,

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

/** The section's profile directory, relative ones under `base`. */
function profileDirIn(base: string, section: BrowserSection): string {
  return resolve(isAbsolute(section.profileDir) ? section.profileDir : join(base, section.profileDir));
}

/** The network policy of the section; none when private networks are allowed. */
function addressPolicyFor(
  section: BrowserSection,
  resolveHost: ResolveHost | undefined,
): AddressPolicy | undefined {
  return section.allowPrivateNetwork
    ? undefined
    : createAddressPolicy({ allowedHosts: section.allowedHosts, resolveHost });
}
