import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSite, type TestSite } from '../test/pages.js';
import { type BrowserService, createBrowserService } from './browser-service.js';
import { createBrowserTools } from './tools.js';

describe('createBrowserTools', () => {
  let site: TestSite;
  let browser: BrowserService;
  const context = {
    agentId: 'default',
    sessionKey: 'default:rpc:test',
    signal: new AbortController().signal,
  };

  beforeAll(async () => {
    site = await startSite();
    browser = createBrowserService({ allowPrivateNetwork: true });
  });

  afterAll(async () => {
    await browser.shutdown();
    await site.close();
  });

  it('offers every browser action as a tool with a JSON-Schema-convertible input', () => {
    const tools = createBrowserTools(browser);
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        'browser_navigate',
        'browser_snapshot',
        'browser_act',
        'browser_screenshot',
        'browser_pdf',
        'browser_tabs',
        'browser_open',
        'browser_focus',
        'browser_close',
        'browser_console',
        'browser_status',
        'browser_stop',
      ]),
    );
    for (const tool of tools) {
      expect(tool.description.length).toBeGreaterThan(10);
      expect(z.toJSONSchema(tool.params)).toMatchObject({ type: 'object' });
    }
    const act = tools.find((tool) => tool.name === 'browser_act');
    expect(act?.params.safeParse({ action: 'dance' }).success).toBe(false);
  });

  it('lets an agent navigate, read a text snapshot and act on a ref from it', async () => {
    const tools = new Map(createBrowserTools(browser).map((tool) => [tool.name, tool]));
    const call = (name: string, params: unknown) => {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.handler(tool.params.parse(params), context) as Promise<Record<string, unknown>>;
    };
    expect(await call('browser_navigate', { url: `${site.origin}/form` })).toMatchObject({ title: 'Form' });
    const snapshot = await call('browser_snapshot', {});
    const text = String(snapshot.text);
    const ref = /textbox "Name" \[ref=([a-z0-9]+)\]/.exec(text)?.[1];
    expect(ref).toBeDefined();
    await call('browser_act', { action: 'fill', ref, value: 'Grace' });
    await call('browser_act', { action: 'click', text: 'Send' });
    await call('browser_act', { action: 'wait', text: 'Thanks Grace' });
    const shot = await call('browser_screenshot', {});
    expect(shot.mimeType).toBe('image/png');
    expect(await call('browser_stop', {})).toEqual({ stopped: true });
  });
});
