import { BrowserError, type BrowserService, browserParamSchemas } from '@agentd/browser';
import { ErrorCodes, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';

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

/** browser.*: the daemon's one headless browser (launched on first use). */
export function browserMethods(deps: { browser: BrowserService }) {
  const { browser } = deps;
  const p = browserParamSchemas;
  const { rpcMethod } = methodsOf('browser', toRpcError);
  return [
    rpcMethod('status', {
      description: 'Whether the browser runs, the focused tab URL and the number of tabs.',
      params: p.none,
      result: z.object({ running: z.boolean(), url: z.string().optional(), tabCount: z.number().optional() }),
      handler: () => browser.status(),
    }),
    rpcMethod('start', {
      description: 'Launch the headless browser; no effect when it already runs.',
      params: p.none,
      handler: (_params, context) => browser.start({ signal: context.signal }),
    }),
    rpcMethod('stop', {
      description: 'Close every tab and end the browser process.',
      params: p.none,
      handler: () => browser.stop(),
    }),
    rpcMethod('navigate', {
      description: 'Load an http(s) URL in the focused tab; returns the final URL, title and status.',
      params: p.navigate,
      handler: (params, context) => browser.navigate(params, { signal: context.signal }),
    }),
    rpcMethod('snapshot', {
      description: 'Accessibility-tree snapshot of the focused tab, with refs browser.act can target.',
      params: p.snapshot,
      handler: (params, context) => browser.snapshot(params, { signal: context.signal }),
    }),
    rpcMethod('screenshot', {
      description: 'PNG screenshot of the focused tab (viewport or full page), base64.',
      params: p.screenshot,
      handler: (params, context) => browser.screenshot(params, { signal: context.signal }),
    }),
    rpcMethod('pdf', {
      description: 'The focused tab printed to PDF, base64.',
      params: p.none,
      handler: (_params, context) => browser.pdf({ signal: context.signal }),
    }),
    rpcMethod('act', {
      description: 'click, type, fill, press, select, hover, scroll or wait on the focused tab.',
      params: p.act,
      handler: (params, context) => browser.act(params, { signal: context.signal }),
    }),
    rpcMethod('tabs', {
      description: 'Open tabs: id, URL, title and which one has focus.',
      params: p.none,
      handler: (_params, context) => browser.tabs({ signal: context.signal }),
    }),
    rpcMethod('open', {
      description: 'Open a tab (blank or at a URL) and focus it.',
      params: p.open,
      handler: (params, context) => browser.open(params, { signal: context.signal }),
    }),
    rpcMethod('focus', {
      description: 'Focus a tab by id.',
      params: p.tab,
      handler: (params, context) => browser.focus(params, { signal: context.signal }),
    }),
    rpcMethod('close', {
      description: 'Close a tab by id.',
      params: p.tab,
      handler: (params, context) => browser.close(params, { signal: context.signal }),
    }),
    rpcMethod('console', {
      description: 'Console messages of the focused tab: level, text, timestamp (bounded per tab).',
      params: p.none,
      handler: () => browser.console(),
    }),
  ];
}
