import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createHttpClient, type HttpClient } from '@agentd/client';
import type { DaemonOptions, RunningDaemon } from '@agentd/daemon';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { ADMIN_TOKEN, daemonPool } from '../../daemon/test/helpers.js';

/** The admin (`*`) token of every test daemon: the daemon tests' own. */
export { ADMIN_TOKEN };

/** The built console the daemon serves in these tests (test/build-once.ts builds it). */
export const CONSOLE_DIST = join(import.meta.dirname, '..', 'dist');

/** Screenshots of every page land here (kept by the run; the README shows some). */
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', 'test-results', 'screenshots');

/** Debian's Chromium with the flags the tree uses for a headless, offline browser. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.AGENTD_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A real daemon on 127.0.0.1:0 serving the built console, with its temp data dir. */
export interface ConsoleDaemon {
  daemon: RunningDaemon;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Starts a daemon on port 0 as {@link ADMIN_TOKEN} serving the built console, with `config`
 * as its config.yaml, through the daemon tests' own helpers; `stop` also removes its data dir.
 */
export async function startConsoleDaemon(
  config: Record<string, unknown> = {},
  options: Partial<DaemonOptions> = {},
): Promise<ConsoleDaemon> {
  const pool = daemonPool('agentd-console-');
  const dataDir = pool.tempDir();
  try {
    const daemon = await pool.start(dataDir, { config, consoleDir: CONSOLE_DIST, ...options });
    return { daemon, dataDir, stop: () => pool.cleanup() };
  } catch (error) {
    await pool.cleanup();
    throw error;
  }
}

/** A page at `width` px that records console errors and CSP refusals (tests assert none). */
export async function openPage(
  browser: Browser,
  width: number,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  // A locator that never matches fails with its own message instead of the test's timeout.
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { context, page, problems };
}

/** Opens the console and logs in with `token` through the form. */
export async function login(
  page: Page,
  baseUrl: string,
  token: string,
  hash = '',
  outcome: 'in' | 'refused' = 'in',
): Promise<void> {
  await page.goto(`${baseUrl}/${hash}`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  // The next step must find the page, not the login form still checking the token (on a loaded
  // machine that takes a while, and "Agent" also labels the form's "agentd console" card).
  if (outcome === 'in') await page.locator('#login-title').waitFor({ state: 'detached', timeout: 30_000 });
}

/** What a page test file drives: its daemon, its browser, an admin RPC client and logged-in pages. */
export interface ConsoleFixture {
  readonly daemon: ConsoleDaemon;
  readonly browser: Browser;
  /** An HTTP client of the daemon as {@link ADMIN_TOKEN}. */
  readonly rpc: HttpClient;
  /**
   * A page at `width` px (default 1280) logged in with `token` (default {@link ADMIN_TOKEN}) at
   * `hash`; `acceptDialogs` confirms every dialog the page asks. Closed after the test.
   */
  open(
    hash: string,
    options?: { token?: string; width?: number; acceptDialogs?: boolean },
  ): Promise<{ page: Page; problems: string[] }>;
}

/**
 * Registers the hooks a page test file shares: before its tests, the daemon `start` answers
 * and Chromium start together; after each test its pages close; after the file both stop
 * (after the file's own `afterAll` hooks, which vitest runs first).
 */
export function useConsole(
  start: () => Promise<ConsoleDaemon>,
  options: { rpcTimeoutMs?: number } = {},
): ConsoleFixture {
  let started: { daemon: ConsoleDaemon; browser: Browser; rpc: HttpClient } | undefined;
  const contexts: BrowserContext[] = [];
  const ready = () => {
    if (!started) throw new Error('the console daemon did not start (see the beforeAll failure)');
    return started;
  };
  beforeAll(async () => {
    const [daemon, browser] = await Promise.all([start(), launchChromium()]);
    const rpc = createHttpClient({
      url: daemon.daemon.url,
      token: ADMIN_TOKEN,
      requestTimeoutMs: options.rpcTimeoutMs ?? 120_000,
    });
    started = { daemon, browser, rpc };
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  afterAll(async () => {
    await started?.browser.close();
    await started?.daemon.stop();
  });
  return {
    get daemon() {
      return ready().daemon;
    },
    get browser() {
      return ready().browser;
    },
    get rpc() {
      return ready().rpc;
    },
    async open(hash, { token = ADMIN_TOKEN, width = 1280, acceptDialogs = false } = {}) {
      const { context, page, problems } = await openPage(ready().browser, width);
      contexts.push(context);
      if (acceptDialogs) page.on('dialog', (dialog) => void dialog.accept());
      await login(page, ready().daemon.daemon.url, token, hash);
      return { page, problems };
    },
  };
}

/** Saves a full-page screenshot as `<name>.png` under {@link SCREENSHOT_DIR}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One axe-core finding of impact serious or critical. */
export interface AxeProblem {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page as it is now and answers the serious
 * and critical violations. axe is evaluated through the DevTools protocol, not a script tag,
 * so the page's CSP stays as strict as in production.
 */
export async function seriousViolations(page: Page): Promise<AxeProblem[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (ctx: unknown, options: unknown) => Promise<AxeResults> } }
    ).axe;
    interface AxeResults {
      violations: Array<{
        id: string;
        impact: string | null;
        help: string;
        nodes: Array<{ target: unknown[] }>;
      }>;
    }
    const results = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id,
        impact: String(v.impact),
        help: v.help,
        targets: v.nodes.map((n) => JSON.stringify(n.target)),
      }));
  });
}

/**
 * The checks every page passes as it is now: no sideways scrolling at the viewport's width, no
 * serious axe violation; then a screenshot `<name>-<width>.png`.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  // Pages fill in as their calls answer: give the layout a few seconds to settle.
  const until = Date.now() + 5000;
  while ((await overflowsHorizontally(page)) && Date.now() < until) await page.waitForTimeout(200);
  if (await overflowsHorizontally(page))
    throw new Error(`${name} scrolls sideways at ${width} px: ${await widestElement(page)}`);
  const violations = await seriousViolations(page);
  if (violations.length > 0)
    throw new Error(`${name} at ${width} px: ${JSON.stringify(violations, null, 2)}`);
  await screenshot(page, `${name}-${width}`);
}

/** The element (through open shadow roots) reaching furthest right, for a failure message. */
function widestElement(page: Page): Promise<string> {
  return page.evaluate(() => {
    let worst = { right: 0, what: 'none' };
    const visit = (root: Document | ShadowRoot) => {
      for (const element of root.querySelectorAll('*')) {
        const right = element.getBoundingClientRect().right;
        if (right > worst.right)
          worst = {
            right,
            what: `<${element.tagName.toLowerCase()} class="${element.getAttribute('class') ?? ''}">`,
          };
        if (element.shadowRoot) visit(element.shadowRoot);
      }
    };
    visit(document);
    return `${worst.what} reaches ${Math.round(worst.right)} px`;
  });
}

/** Whether the page scrolls sideways (a layout that does not fit the viewport). */
export function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
}
