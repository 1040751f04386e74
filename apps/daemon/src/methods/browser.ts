import { BrowserError, type BrowserService, browserParamSchemas, type CallOptions } from '@agentd/browser';
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

/** The browser calls a method hands its validated params and the call's abort signal, as they are. */
type ParamsCall = 'navigate' | 'snapshot' | 'screenshot' | 'act' | 'open' | 'focus' | 'close';

/** The browser calls a method hands only the call's abort signal (the method takes no params). */
type SignalCall = 'start' | 'pdf' | 'tabs';

/** browser.*: the daemon's one headless browser (launched on first use). */
export function browserMethods(deps: { browser: BrowserService }) {
  const { browser } = deps;
  const p = browserParamSchemas;
  const { rpcMethod } = methodsOf('browser', toRpcError);
  // Most methods are the browser call of the same name; these two say so once. The params
  // schema must produce what that call takes, so a schema and its call cannot drift apart.
  const withParams = <K extends ParamsCall>(
    name: K,
    description: string,
    params: z.ZodType<Parameters<BrowserService[K]>[0]>,
  ) =>
    rpcMethod(name, {
      description,
      params,
      handler: (args, context) => {
        const forward = browser[name] as (args: unknown, call: CallOptions) => Promise<unknown>;
        return forward.call(browser, args, { signal: context.signal });
      },
    });
  const withSignal = (name: SignalCall, description: string) =>
    rpcMethod(name, {
      description,
      params: p.none,
      handler: (_params, context): Promise<unknown> => browser[name]({ signal: context.signal }),
    });
  return [
    rpcMethod('status', {
      description: 'Whether the browser runs, the focused tab URL and the number of tabs.',
      params: p.none,
      result: z.object({ running: z.boolean(), url: z.string().optional(), tabCount: z.number().optional() }),
      handler: () => browser.status(),
    }),
    withSignal('start', 'Launch the headless browser; no effect when it already runs.'),
    rpcMethod('stop', {
      description: 'Close every tab and end the browser process.',
      params: p.none,
      handler: () => browser.stop(),
    }),
    withParams(
      'navigate',
      'Load an http(s) URL in the focused tab; returns the final URL, title and status.',
      p.navigate,
    ),
    withParams(
      'snapshot',
      'Accessibility-tree snapshot of the focused tab, with refs browser.act can target.',
      p.snapshot,
    ),
    withParams(
      'screenshot',
      'PNG screenshot of the focused tab (viewport or full page), base64.',
      p.screenshot,
    ),
    withSignal('pdf', 'The focused tab printed to PDF, base64.'),
    withParams('act', 'click, type, fill, press, select, hover, scroll or wait on the focused tab.', p.act),
    withSignal('tabs', 'Open tabs: id, URL, title and which one has focus.'),
    withParams('open', 'Open a tab (blank or at a URL) and focus it.', p.open),
    withParams('focus', 'Focus a tab by id.', p.tab),
    withParams('close', 'Close a tab by id.', p.tab),
    rpcMethod('console', {
      description: 'Console messages of the focused tab: level, text, timestamp (bounded per tab).',
      params: p.none,
      handler: () => browser.console(),
    }),
  ];
}
