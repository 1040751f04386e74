import { BrowserError, type BrowserService, browserParamSchemas } from '@agentd/browser';
import { defineMethod, ErrorCodes, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';

// Refusals caused by what the caller sent are -32602 naming the field; an unknown tab is
// -32004; everything the browser itself failed at is -32603 with a readable message and
// the package's error code in `data.code` (the message never carries secrets, only URLs
// and selectors the caller gave).
const paramsCodes = new Set(['INVALID_URL', 'NAVIGATION_BLOCKED', 'INVALID_ACTION', 'REF_NOT_FOUND']);

function toRpcError(error: unknown): unknown {
  if (!(error instanceof BrowserError)) return error;
  if (error.code === 'TAB_NOT_FOUND') return RpcError.notFound('tab', String(error.data?.tabId ?? ''));
  if (paramsCodes.has(error.code)) {
    const field = String(error.data?.field ?? 'params');
    return new RpcError(ErrorCodes.InvalidParams, `Invalid params: ${error.message}`, {
      data: {
        issues: [{ path: [field], code: 'custom', message: error.message }],
        code: error.code,
        ...(error.data?.host === undefined ? {} : { host: error.data.host, reason: error.data.reason }),
      },
    });
  }
  return new RpcError(ErrorCodes.InternalError, error.message, {
    data: { code: error.code, ...(error.data?.netError ? { netError: error.data.netError } : {}) },
    cause: error,
  });
}

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toRpcError(error);
  }
}

/** browser.*: the daemon's one headless browser (launched on first use). */
export function browserMethods(deps: { browser: BrowserService }) {
  const { browser } = deps;
  const p = browserParamSchemas;
  return [
    defineMethod({
      name: 'browser.status',
      scope: 'rpc',
      description: 'Whether the browser runs, the focused tab URL and the number of tabs.',
      params: p.none,
      result: z.object({ running: z.boolean(), url: z.string().optional(), tabCount: z.number().optional() }),
      handler: () => browser.status(),
    }),
    defineMethod({
      name: 'browser.start',
      scope: 'rpc',
      description: 'Launch the headless browser; no effect when it already runs.',
      params: p.none,
      handler: (_params, context) => mapped(() => browser.start({ signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.stop',
      scope: 'rpc',
      description: 'Close every tab and end the browser process.',
      params: p.none,
      handler: () => mapped(() => browser.stop()),
    }),
    defineMethod({
      name: 'browser.navigate',
      scope: 'rpc',
      description: 'Load an http(s) URL in the focused tab; returns the final URL, title and status.',
      params: p.navigate,
      handler: (params, context) => mapped(() => browser.navigate(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.snapshot',
      scope: 'rpc',
      description: 'Accessibility-tree snapshot of the focused tab, with refs browser.act can target.',
      params: p.snapshot,
      handler: (params, context) => mapped(() => browser.snapshot(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.screenshot',
      scope: 'rpc',
      description: 'PNG screenshot of the focused tab (viewport or full page), base64.',
      params: p.screenshot,
      handler: (params, context) => mapped(() => browser.screenshot(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.pdf',
      scope: 'rpc',
      description: 'The focused tab printed to PDF, base64.',
      params: p.none,
      handler: (_params, context) => mapped(() => browser.pdf({ signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.act',
      scope: 'rpc',
      description: 'click, type, fill, press, select, hover, scroll or wait on the focused tab.',
      params: p.act,
      handler: (params, context) => mapped(() => browser.act(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.tabs',
      scope: 'rpc',
      description: 'Open tabs: id, URL, title and which one has focus.',
      params: p.none,
      handler: (_params, context) => mapped(() => browser.tabs({ signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.open',
      scope: 'rpc',
      description: 'Open a tab (blank or at a URL) and focus it.',
      params: p.open,
      handler: (params, context) => mapped(() => browser.open(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.focus',
      scope: 'rpc',
      description: 'Focus a tab by id.',
      params: p.tab,
      handler: (params, context) => mapped(() => browser.focus(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.close',
      scope: 'rpc',
      description: 'Close a tab by id.',
      params: p.tab,
      handler: (params, context) => mapped(() => browser.close(params, { signal: context.signal })),
    }),
    defineMethod({
      name: 'browser.console',
      scope: 'rpc',
      description: 'Console messages of the focused tab: level, text, timestamp (bounded per tab).',
      params: p.none,
      handler: () => mapped(() => browser.console()),
    }),
  ];
}
