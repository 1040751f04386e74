import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection, startSite, type TestSite } from '../test/pages.js';
import { type BrowserService, createBrowserService } from './browser-service.js';

describe('createBrowserService with allowPrivateNetwork off', () => {
  // `allowed` stands in for a public site: it is exempt by host and port. `secret` is an
  // internal service nothing may reach; its request log must stay empty.
  let allowed: TestSite;
  let secret: TestSite;
  let browser: BrowserService;

  beforeAll(async () => {
    secret = await startSite();
    allowed = await startSite({
      '/to-secret': (_req, res) => {
        res.writeHead(302, { location: `http://localhost:${secret.port}/form` }).end();
      },
      '/to-secret-tls': (_req, res) => {
        res.writeHead(302, { location: `https://127.0.0.1:${secret.port}/form` }).end();
      },
      '/embeds-secret': (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<title>Embeds</title><img src="http://127.0.0.1:${secret.port}/pixel.png">` +
              `<script>fetch('http://localhost:${secret.port}/api').catch(() => { document.title = 'fetch refused'; })</script>`,
          );
      },
    });
    browser = createBrowserService({
      allowedHosts: [`127.0.0.1:${allowed.port}`],
      resolveHost: async (host) => {
        if (host === 'intranet.test') return ['10.0.0.7'];
        if (host === 'metadata.test') return ['169.254.169.254'];
        if (host === 'localhost') return ['127.0.0.1'];
        return [];
      },
    });
  });

  afterAll(async () => {
    await browser.shutdown();
    await allowed.close();
    await secret.close();
  });

  it('refuses loopback, private and link-local targets, names resolved first', async () => {
    const targets = [
      [`http://127.0.0.1:${secret.port}/form`, 'loopback'],
      [`http://localhost:${secret.port}/form`, 'localhost resolves to 127.0.0.1, a loopback'],
      [`http://[::1]:${secret.port}/form`, 'loopback'],
      [`http://0.0.0.0:${secret.port}/form`, 'unspecified'],
      ['http://intranet.test/', 'intranet.test resolves to 10.0.0.7, a private'],
      ['http://metadata.test/latest/meta-data/', 'link-local'],
      ['http://192.168.1.1/', 'private'],
    ] as const;
    for (const [url, reason] of targets) {
      const refused = await rejection(browser.navigate({ url }));
      expect(refused.code).toBe('NAVIGATION_BLOCKED');
      expect(refused.message).toContain(reason);
    }
    expect((await rejection(browser.open({ url: `http://127.0.0.1:${secret.port}/` }))).code).toBe(
      'NAVIGATION_BLOCKED',
    );
    expect(secret.hits).toEqual([]);
  });

  it('loads an allowed host through the checking proxy', async () => {
    const page = await browser.navigate({ url: `${allowed.origin}/form` });
    expect(page).toMatchObject({ title: 'Form', status: 200 });
    expect(allowed.hits).toContain('/form');
  });

  it('refuses a redirect hop to a private address, over http and https', async () => {
    const plain = await rejection(browser.navigate({ url: `${allowed.origin}/to-secret` }));
    expect(plain.code).toBe('NAVIGATION_BLOCKED');
    expect(plain.message).toContain('localhost resolves to 127.0.0.1');
    const tls = await rejection(browser.navigate({ url: `${allowed.origin}/to-secret-tls` }));
    expect(tls.code).toBe('NAVIGATION_BLOCKED');
    expect(tls.message).toContain('127.0.0.1 is a loopback address');
    expect(secret.hits).toEqual([]);
  });

  it('refuses subresources and scripted requests to private addresses', async () => {
    const page = await browser.navigate({ url: `${allowed.origin}/embeds-secret` });
    expect(page.status).toBe(200);
    await browser.act({ action: 'wait', timeMs: 300 });
    expect(secret.hits).toEqual([]);
  });
});
