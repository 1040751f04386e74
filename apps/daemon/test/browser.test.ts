import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createWsClient } from '@agentd/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { ADMIN_TOKEN, startTestDaemon, type TestDaemon, rpcFailure } from './helpers.js';

/** Pids whose command line mentions `needle` (the browser profile dir is unique per daemon). */
function processesMentioning(needle: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('browser namespace', () => {
  let site: Awaited<ReturnType<typeof listenLocal>>;
  let origin: string;
  let td: TestDaemon;

  beforeAll(async () => {
    site = await listenLocal((req, res) => {
      if (req.url === '/') {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<title>Home</title><h1>Hello</h1><button onclick="console.log(\'pressed\')">Press</button>');
      } else res.writeHead(204).end();
    });
    origin = site.url;
    td = await startTestDaemon({ config: { browser: { allowPrivateNetwork: true } } });
  });

  afterAll(async () => {
    await td?.stop();
    await site.close();
  });

  it('drives a page over JSON-RPC and leaves no browser process after stop', async () => {
    const client = createWsClient({ url: td.daemon.wsUrl, token: ADMIN_TOKEN });
    await client.connect();
    try {
      expect(await client.call('browser.status')).toEqual({ running: false });
      const page = (await client.call('browser.navigate', { url: `${origin}/` })) as Record<string, unknown>;
      expect(page).toMatchObject({ url: `${origin}/`, title: 'Home', status: 200 });
      expect(await client.call('browser.status')).toMatchObject({
        running: true,
        url: `${origin}/`,
        tabCount: 1,
      });

      const snapshot = (await client.call('browser.snapshot')) as { nodes: Array<Record<string, unknown>> };
      const text = JSON.stringify(snapshot.nodes);
      expect(text).toContain('"role":"heading"');
      const button = /"role":"button","name":"Press","ref":"([a-z0-9]+)"/.exec(text)?.[1];
      expect(button).toBeDefined();
      expect(await client.call('browser.act', { action: 'click', ref: button })).toMatchObject({ ok: true });
      const consoleEntries = (await client.call('browser.console')) as { entries: Array<{ text: string }> };
      expect(consoleEntries.entries.map((entry) => entry.text)).toContain('pressed');

      const shot = (await client.call('browser.screenshot', {})) as { data: string };
      expect(Buffer.from(shot.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
      const pdf = (await client.call('browser.pdf')) as { data: string };
      expect(Buffer.from(pdf.data, 'base64').subarray(0, 5).toString()).toBe('%PDF-');

      const { tabId } = (await client.call('browser.open', {})) as { tabId: string };
      expect(await client.call('browser.focus', { tabId })).toEqual({ focused: true, tabId });
      const tabs = (await client.call('browser.tabs')) as { tabs: Array<{ id: string }> };
      expect(tabs.tabs.map((tab) => tab.id)).toContain(tabId);
      expect(await client.call('browser.close', { tabId })).toEqual({ closed: true, tabId });
      expect(await client.call('browser.start')).toEqual({ started: true });

      const profileDir = join(td.dataDir, 'browser-profile');
      expect(processesMentioning(profileDir).length).toBeGreaterThan(0);
      expect(await client.call('browser.stop')).toEqual({ stopped: true });
      expect(processesMentioning(profileDir)).toEqual([]);
      expect(await client.call('browser.status')).toEqual({ running: false });
    } finally {
      await client.close();
    }
  });

  it('answers bad input with -32602 naming the field and unknown tabs with -32004', async () => {
    const client = createWsClient({ url: td.daemon.wsUrl, token: ADMIN_TOKEN });
    await client.connect();
    try {
      const scheme = await rpcFailure(client.call('browser.navigate', { url: 'file:///etc/passwd' }));
      expect(scheme.code).toBe(-32602);
      expect(scheme.message).toContain('url');
      const missing = await rpcFailure(client.call('browser.navigate', {}));
      expect(missing.code).toBe(-32602);
      expect(missing.message).toContain('url');
      const action = await rpcFailure(client.call('browser.act', { action: 'fill', selector: 'input' }));
      expect(action.code).toBe(-32602);
      expect(action.message).toContain('value');
      const unknown = await rpcFailure(client.call('browser.focus', { tabId: 'nope' }));
      expect(unknown.code).toBe(-32004);
      expect(unknown.message).toBe('Tab not found: nope');
    } finally {
      await client.close();
    }
  });

  it('ends the browser process when the daemon shuts down', async () => {
    const client = createWsClient({ url: td.daemon.wsUrl, token: ADMIN_TOKEN });
    await client.connect();
    expect(await client.call('browser.start')).toEqual({ started: true });
    await client.close();
    const profileDir = join(td.dataDir, 'browser-profile');
    expect(processesMentioning(profileDir).length).toBeGreaterThan(0);
    await td.daemon.stop();
    expect(processesMentioning(profileDir)).toEqual([]);
  });
});
