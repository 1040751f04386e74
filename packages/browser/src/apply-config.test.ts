import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection, startSite, type TestSite } from '../test/pages.js';
import { type BrowserService, createBrowserService } from './browser-service.js';

describe('BrowserService.applyConfig', () => {
  let site: TestSite;
  let browser: BrowserService;

  beforeAll(async () => {
    site = await startSite();
    browser = createBrowserService({ maxSnapshotNodes: 100 });
  });

  afterAll(async () => {
    await browser.shutdown();
    await site.close();
  });

  it('lets a running browser reach private addresses once allowPrivateNetwork is turned on', async () => {
    expect((await rejection(browser.navigate({ url: `${site.origin}/form` }))).code).toBe(
      'NAVIGATION_BLOCKED',
    );
    await browser.start();
    expect(await browser.applyConfig({ allowPrivateNetwork: true })).toEqual({ relaunched: true });
    const page = await browser.navigate({ url: `${site.origin}/form` });
    expect(page).toMatchObject({ title: 'Form', status: 200 });
  });

  it('applies per-call limits without relaunching the browser', async () => {
    const pid = browser.pid;
    expect(pid).toBeGreaterThan(0);
    expect(await browser.applyConfig({ allowPrivateNetwork: true, maxSnapshotNodes: 10 })).toEqual({
      relaunched: false,
    });
    expect(browser.pid).toBe(pid);
    const snapshot = await browser.snapshot();
    expect(snapshot.nodeCount).toBeLessThanOrEqual(10);
  });

  it('refuses private addresses again once the policy is turned back off', async () => {
    expect(await browser.applyConfig({ allowPrivateNetwork: false })).toEqual({ relaunched: true });
    expect(await browser.status()).toEqual({ running: false });
    expect((await rejection(browser.navigate({ url: `${site.origin}/form` }))).code).toBe(
      'NAVIGATION_BLOCKED',
    );
  });

  it('rejects an invalid section and keeps the previous one', async () => {
    expect((await rejection(browser.applyConfig({ timeoutMs: 1 }))).code).toBe('INVALID_OPTIONS');
    expect((await rejection(browser.navigate({ url: `${site.origin}/form` }))).code).toBe(
      'NAVIGATION_BLOCKED',
    );
  });
});
