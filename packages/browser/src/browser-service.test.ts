import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pngSize, rejection, startSite, type TestSite } from '../test/pages.js';
import { type BrowserService, createBrowserService } from './browser-service.js';
import { findProcesses, isAlive } from './internal/processes.js';
import type { SnapshotNode } from './internal/snapshot.js';

function flatten(nodes: SnapshotNode[]): SnapshotNode[] {
  return nodes.flatMap((node) => [node, ...flatten(node.children ?? [])]);
}

function findNode(nodes: SnapshotNode[], role: string, name: string): SnapshotNode {
  const node = flatten(nodes).find((candidate) => candidate.role === role && candidate.name === name);
  if (!node) throw new Error(`no ${role} "${name}" in the snapshot`);
  return node;
}

describe('createBrowserService', () => {
  let site: TestSite;
  let dataDir: string;
  let browser: BrowserService;

  beforeAll(async () => {
    site = await startSite();
    dataDir = mkdtempSync(join(tmpdir(), 'agentd-browser-test-'));
    browser = createBrowserService({
      dataDir,
      allowPrivateNetwork: true,
      maxConsoleEntries: 20,
      maxSnapshotNodes: 100,
    });
  });

  afterAll(async () => {
    await browser.shutdown();
    await site.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts lazily, and start has no effect when the browser already runs', async () => {
    expect(await browser.status()).toEqual({ running: false });
    expect(await browser.tabs()).toEqual({ tabs: [] });
    expect(await browser.start()).toEqual({ started: true });
    const pid = browser.pid;
    expect(pid).toBeGreaterThan(0);
    expect(await browser.start()).toEqual({ started: true });
    expect(browser.pid).toBe(pid);
    const status = await browser.status();
    expect(status).toMatchObject({ running: true, tabCount: 1, url: 'about:blank' });
    expect(findProcesses(browser.profileDir).length).toBeGreaterThan(0);
  });

  it('navigates and reports the final url, title and status after a redirect', async () => {
    const result = await browser.navigate({ url: `${site.origin}/redirect` });
    expect(result).toMatchObject({ url: `${site.origin}/form`, title: 'Form', status: 200 });
    expect((await browser.status()).url).toBe(`${site.origin}/form`);
  });

  it('fills a form through snapshot references, selectors and text', async () => {
    await browser.navigate({ url: `${site.origin}/form` });
    const snapshot = await browser.snapshot();
    expect(snapshot.title).toBe('Form');
    expect(snapshot.truncated).toBe(false);
    const name = findNode(snapshot.nodes, 'textbox', 'Name');
    expect(name.ref).toMatch(/^(f\d+)?e\d+$/);
    expect(findNode(snapshot.nodes, 'heading', 'Sign up').level).toBe(1);

    await browser.act({ action: 'fill', ref: name.ref, value: 'Ada' });
    const selected = await browser.act({ action: 'select', selector: 'select[name=color]', value: 'Green' });
    expect(selected.selected).toEqual(['green']);
    await browser.act({ action: 'click', ref: findNode(snapshot.nodes, 'checkbox', 'Subscribe').ref });
    const submitted = await browser.act({ action: 'click', selector: 'button', text: 'Send' });
    expect(submitted).toMatchObject({ ok: true, action: 'click' });

    await browser.act({ action: 'wait', text: 'Thanks Ada' });
    const after = await browser.snapshot({ format: 'text' });
    expect(after.title).toBe('Done');
    expect(after.text).toContain('Thanks Ada, color green, subscribe on');
  });

  it('types, presses keys, hovers, scrolls and waits for text to appear', async () => {
    await browser.navigate({ url: `${site.origin}/interactive` });
    await browser.act({ action: 'hover', text: 'Hover me' });
    expect((await browser.snapshot({ format: 'text' })).text).toContain('hovered');

    await browser.act({ action: 'click', selector: '#q' });
    await browser.act({ action: 'type', value: 'cats' });
    await browser.act({ action: 'press', selector: '#q', value: 'Enter' });
    expect((await browser.snapshot({ format: 'text' })).text).toContain('searched:cats');

    await browser.act({ action: 'click', text: 'Later' });
    const waited = await browser.act({ action: 'wait', text: 'Appeared later' });
    expect(waited.ok).toBe(true);

    const scrolled = await browser.act({ action: 'scroll', value: '800' });
    expect(scrolled.scrollY).toBe(800);
    const toBottom = await browser.act({ action: 'scroll', text: 'Bottom' });
    expect(toBottom.scrollY).toBeGreaterThan(4000);
    await browser.act({ action: 'wait', timeMs: 50 });
  });

  it('refuses incomplete actions and references that name no element', async () => {
    expect((await rejection(browser.act({ action: 'fill', selector: '#q' }))).code).toBe('INVALID_ACTION');
    expect((await rejection(browser.act({ action: 'click' }))).code).toBe('INVALID_ACTION');
    const stale = await rejection(browser.act({ action: 'click', ref: 'e9999' }));
    expect(stale.code).toBe('REF_NOT_FOUND');
    expect(stale.data).toMatchObject({ ref: 'e9999' });
    const missing = await rejection(
      browser.act({ action: 'click', selector: '#does-not-exist' }, { timeoutMs: 800 }),
    );
    expect(missing.code).toBe('TIMEOUT');
  });

  it('bounds the snapshot and says when it was cut', async () => {
    await browser.navigate({ url: `${site.origin}/many` });
    const tree = await browser.snapshot();
    expect(tree.truncated).toBe(true);
    expect(tree.nodeCount).toBe(100);
    expect(flatten(tree.nodes)).toHaveLength(100);
    const text = await browser.snapshot({ format: 'text' });
    expect(text.truncated).toBe(true);
    expect(text.text.split('\n')).toHaveLength(100);
  });

  it('takes viewport and full-page PNG screenshots and prints a PDF', async () => {
    await browser.navigate({ url: `${site.origin}/tall` });
    const viewport = pngSize((await browser.screenshot()).data);
    expect(viewport).toEqual({ width: 1280, height: 720 });
    const full = pngSize((await browser.screenshot({ fullPage: true })).data);
    expect(full.height).toBeGreaterThanOrEqual(3000);
    const pdf = Buffer.from((await browser.pdf()).data, 'base64');
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('opens, lists, focuses and closes tabs with stable ids', async () => {
    const first = (await browser.tabs()).tabs;
    expect(first).toHaveLength(1);
    const firstId = first[0]?.id as string;
    const { tabId } = await browser.open({ url: `${site.origin}/form` });
    expect(tabId).not.toBe(firstId);
    let tabs = (await browser.tabs()).tabs;
    expect(tabs.map((tab) => tab.id)).toEqual([firstId, tabId]);
    expect(tabs.find((tab) => tab.id === tabId)).toMatchObject({ title: 'Form', focused: true });

    expect(await browser.focus({ tabId: firstId })).toEqual({ focused: true, tabId: firstId });
    expect((await browser.status()).url).toBe(`${site.origin}/tall`);

    // A target=_blank link opens a tab that takes the focus, as in a desktop browser.
    await browser.navigate({ url: `${site.origin}/interactive` });
    const clicked = await browser.act({ action: 'click', text: 'Popup' });
    await vi.waitFor(async () => expect((await browser.tabs()).tabs).toHaveLength(3));
    const popup = (await browser.tabs()).tabs.find((tab) => tab.focused);
    expect(popup?.id).not.toBe(firstId);
    expect(popup?.id).not.toBe(tabId);
    if (clicked.openedTabIds) expect(clicked.openedTabIds).toEqual([popup?.id]);
    await vi.waitFor(async () => expect((await browser.status()).url).toBe(`${site.origin}/popup`));

    expect(await browser.close({ tabId: popup?.id as string })).toEqual({ closed: true, tabId: popup?.id });
    expect(await browser.close({ tabId })).toEqual({ closed: true, tabId });
    tabs = (await browser.tabs()).tabs;
    expect(tabs).toEqual([expect.objectContaining({ id: firstId, focused: true })]);

    const gone = await rejection(browser.focus({ tabId }));
    expect(gone.code).toBe('TAB_NOT_FOUND');
    expect(gone.message).toBe(`Tab not found: ${tabId}`);
    expect((await rejection(browser.close({ tabId: 'nope' }))).code).toBe('TAB_NOT_FOUND');
  });

  it('captures console messages and page errors with level and timestamp, bounded per tab', async () => {
    const before = Date.now();
    const { tabId: consoleTab } = await browser.open({ url: `${site.origin}/console` });
    await vi.waitFor(async () => {
      const { entries } = await browser.console();
      expect(entries.at(-1)?.text).toContain('boom');
    });
    const { entries, dropped } = await browser.console();
    expect(entries).toHaveLength(20);
    const last = entries.at(-1);
    expect(last).toMatchObject({ level: 'error', text: 'Uncaught Error: boom' });
    expect(last?.timestamp).toBeGreaterThanOrEqual(before);
    // 29 messages into a buffer of 20: the oldest nine (info lines 0 to 8) were dropped.
    expect(dropped).toBe(9);
    expect(entries[0]).toMatchObject({ level: 'info', text: 'line 9' });
    expect(entries.slice(-4).map((entry) => [entry.level, entry.text])).toEqual([
      ['log', 'hello'],
      ['warn', 'careful'],
      ['error', 'bad'],
      ['error', 'Uncaught Error: boom'],
    ]);

    // Console entries belong to their tab: a fresh tab starts empty.
    const { tabId } = await browser.open();
    expect((await browser.console()).entries).toEqual([]);
    await browser.close({ tabId });
    await browser.close({ tabId: consoleTab });
  });

  it('times out a page that never finishes loading and keeps serving calls', async () => {
    const hung = await rejection(browser.navigate({ url: `${site.origin}/hang` }, { timeoutMs: 1500 }));
    expect(hung.code).toBe('TIMEOUT');
    expect(hung.data).toMatchObject({ timeoutMs: 1500 });
    const next = await browser.navigate({ url: `${site.origin}/form` });
    expect(next.title).toBe('Form');
  });

  it('refuses URLs that are not http or https', async () => {
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,hi',
      'chrome://version',
      'nope',
    ]) {
      const refused = await rejection(browser.navigate({ url }));
      expect(refused.code).toBe('INVALID_URL');
    }
    expect((await rejection(browser.open({ url: 'file:///etc/hosts' }))).code).toBe('INVALID_URL');
  });

  it('stop closes every tab and leaves no browser process behind', async () => {
    const oldTabs = (await browser.tabs()).tabs.map((tab) => tab.id);
    const pid = browser.pid as number;
    expect(isAlive(pid)).toBe(true);
    expect(await browser.stop()).toEqual({ stopped: true });
    expect(await browser.status()).toEqual({ running: false });
    expect(await browser.tabs()).toEqual({ tabs: [] });
    expect(isAlive(pid)).toBe(false);
    expect(findProcesses(browser.profileDir)).toEqual([]);
    expect(await browser.stop()).toEqual({ stopped: true });

    // The next call that needs the browser starts a fresh one with fresh tabs.
    await browser.navigate({ url: `${site.origin}/form` });
    const newTabs = (await browser.tabs()).tabs.map((tab) => tab.id);
    expect(newTabs).toHaveLength(1);
    expect(oldTabs).not.toContain(newTabs[0]);
    expect(browser.pid).not.toBe(pid);
  });
});

describe('createBrowserService recovery', () => {
  let site: TestSite;
  let browser: BrowserService;

  beforeAll(async () => {
    site = await startSite();
    browser = createBrowserService({ allowPrivateNetwork: true, probeTimeoutMs: 1000 });
  });

  afterAll(async () => {
    const profileDir = browser.profileDir;
    await browser.shutdown();
    expect(findProcesses(profileDir)).toEqual([]);
    await site.close();
  });

  it('starts a new browser on the next call after the process was killed externally', async () => {
    await browser.navigate({ url: `${site.origin}/form` });
    const pid = browser.pid as number;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false));
    await vi.waitFor(async () => expect((await browser.status()).running).toBe(false));

    const again = await browser.navigate({ url: `${site.origin}/form` });
    expect(again.title).toBe('Form');
    expect(browser.pid).not.toBe(pid);
    // The old browser's helpers went with it.
    expect(findProcesses(browser.profileDir)).not.toContain(pid);
  });

  it('kills a browser that stops answering and starts a new one on the next call', async () => {
    await browser.navigate({ url: `${site.origin}/form` });
    const pid = browser.pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      const stuck = await rejection(browser.snapshot({}, { timeoutMs: 1000 }));
      expect(stuck.code).toBe('TIMEOUT');
      // The health probe gets no answer either, so the frozen process is killed.
      await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGCONT');
    }
    const again = await browser.navigate({ url: `${site.origin}/form` });
    expect(again.title).toBe('Form');
    expect(browser.pid).not.toBe(pid);
  });

  it('refuses calls after shutdown', async () => {
    await browser.shutdown();
    expect((await rejection(browser.navigate({ url: `${site.origin}/form` }))).code).toBe('CLOSED');
  });
});
