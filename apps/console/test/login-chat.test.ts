import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHttpClient } from '@agentd/client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  type ConsoleDaemon,
  launchChromium,
  login,
  openPage,
  overflowsHorizontally,
  screenshot,
  seriousViolations,
} from './harness.js';

let daemon: ConsoleDaemon;
let browser: Browser;

beforeAll(async () => {
  const { startConsoleDaemon } = await import('./harness.js');
  [daemon, browser] = await Promise.all([
    startConsoleDaemon({ gateway: { wsHeartbeatMs: 0 } }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

describe('console login and chat', () => {
  it('serves the page with a strict CSP, no inline script and frame denial', async () => {
    const response = await fetch(`${daemon.daemon.url}/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toMatch(/https?:\/\//);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const body = await response.text();
    // The only script is the module file under /assets/.
    expect(body.match(/<script\b[^>]*>/g)).toEqual([
      expect.stringMatching(/src="\/assets\/index-[\w-]+\.js"/),
    ]);
  });

  it('refuses a wrong token and keeps nothing in session storage', async () => {
    const { context, page } = await openPage(browser, 1280);
    await login(page, daemon.daemon.url, 'not-the-token-0123456789abcdef0123456789', '', 'refused');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('refused this token');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await screenshot(page, 'login-refused');
    await context.close();
  });

  it('signs in through the one-time link of `agentd console`, which works once', async () => {
    const daemonDir = join(import.meta.dirname, '..', '..', 'daemon');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        join(daemonDir, 'src', 'cli.ts'),
        'console',
        '--data-dir',
        daemon.dataDir,
        '--url',
        daemon.daemon.url,
      ],
      { cwd: daemonDir },
    );
    const link = /(http:\/\/\S+#login=[\w-]+)/.exec(stdout)?.[1];
    expect(link).toBeDefined();
    const { context, page, problems } = await openPage(browser, 1280);
    await page.goto(link!);
    await expect.poll(() => page.getByRole('heading', { name: 'Chat' }).count()).toBe(1);
    // The code left the address bar; the minted admin token is this tab's.
    expect(page.url()).not.toContain('login=');
    expect(await page.getByText('admin token').count()).toBe(1);
    expect(await page.evaluate(() => sessionStorage.getItem('agentd.console.token'))).toMatch(/\S{20,}/);
    expect(problems).toEqual([]);
    // The same link in a fresh tab is refused.
    const second = await openPage(browser, 1280);
    await second.page.goto(link!);
    await expect.poll(() => second.page.getByRole('alert').textContent()).toContain('wrong, used or expired');
    await context.close();
    await second.context.close();
  });

  it('returns to the login form when the token is revoked while the tab is open', async () => {
    const admin = createHttpClient({ url: daemon.daemon.url, token: ADMIN_TOKEN });
    const { token } = (await admin.call('tokens.create', { scopes: ['rpc'], id: 'console-revoked' })) as {
      token: string;
    };
    const { context, page } = await openPage(browser, 1280);
    await login(page, daemon.daemon.url, token, '#/chat');
    await expect.poll(() => page.getByRole('heading', { name: 'Chat' }).count()).toBe(1);
    await admin.call('tokens.revoke', { id: 'console-revoked' });
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('no longer accepts this token');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await page.getByLabel('Token').count()).toBe(1);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`logs in with the admin token and streams the offline agent's reply at ${width} px`, async () => {
      const { context, page, problems } = await openPage(browser, width);
      await login(page, daemon.daemon.url, ADMIN_TOKEN, '#/chat');
      await expect.poll(() => page.getByRole('heading', { name: 'Chat' }).count()).toBe(1);
      expect(await page.evaluate(() => sessionStorage.getItem('agentd.console.token'))).toBe(ADMIN_TOKEN);
      await page.getByRole('textbox', { name: 'Message' }).fill(`hello from ${width}`);
      await page.getByRole('button', { name: 'Send' }).click();
      const reply = page.getByTestId('reply-text');
      await expect
        .poll(() => reply.textContent(), { timeout: 30_000 })
        .toContain(`You said: "hello from ${width}"`);
      // The reply came as deltas; the finished turn and the session's history follow.
      await expect.poll(() => page.getByText('Turn result').count()).toBe(1);
      await expect.poll(() => page.locator('ol.history li').count()).toBeGreaterThanOrEqual(2);
      expect(await overflowsHorizontally(page)).toBe(false);
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, `chat-${width}`);
      // A reload keeps the tab logged in (the token is in session storage).
      await page.reload();
      await expect.poll(() => page.getByRole('heading', { name: 'Chat' }).count()).toBe(1);
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
