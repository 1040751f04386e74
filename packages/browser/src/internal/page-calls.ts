import type {
  BrowserService,
  CallOptions,
  SnapshotResult,
  SnapshotTextResult,
  TabInfo,
} from '../browser-service.js';
import { BrowserError } from '../errors.js';
import { checkActParams, performAction } from './actions.js';
import { checkUrl, goto, titleOf } from './navigation.js';
import { findTab, focusedTab, type PageContext, registerPage } from './session.js';
import { boundSnapshot, boundSnapshotText } from './snapshot.js';

/** The service's calls on pages and tabs. */
export type PageCalls = Pick<
  BrowserService,
  'navigate' | 'snapshot' | 'screenshot' | 'pdf' | 'act' | 'tabs' | 'open' | 'focus' | 'close' | 'console'
>;

/** The per-call operations on pages and tabs, each run through `ctx.run`. */
export function createPageCalls(ctx: PageContext): PageCalls {
  function snapshot(params?: { format?: 'tree' | undefined }, call?: CallOptions): Promise<SnapshotResult>;
  function snapshot(params: { format: 'text' }, call?: CallOptions): Promise<SnapshotTextResult>;
  function snapshot(
    params?: { format?: 'tree' | 'text' | undefined },
    call?: CallOptions,
  ): Promise<SnapshotResult | SnapshotTextResult>;
  function snapshot(
    params: { format?: 'tree' | 'text' | undefined } = {},
    call?: CallOptions,
  ): Promise<SnapshotResult | SnapshotTextResult> {
    return snapshotOf(ctx, params, call);
  }

  return {
    async navigate(params, call) {
      const url = await checkUrl(ctx.policy, params.url);
      return ctx.run('navigate', call, async (current, timeoutMs) => {
        const tab = await focusedTab(ctx, current);
        return goto(ctx.now, current, tab, url, params.waitUntil ?? 'load', timeoutMs);
      });
    },

    snapshot,

    screenshot(params = {}, call) {
      return ctx.run('screenshot', call, async (current, timeoutMs) => {
        const tab = await focusedTab(ctx, current);
        const png = await tab.page.screenshot({
          type: 'png',
          fullPage: params.fullPage ?? false,
          timeout: timeoutMs,
        });
        return { data: png.toString('base64') };
      });
    },

    pdf(call) {
      return ctx.run('pdf', call, async (current) => {
        const tab = await focusedTab(ctx, current);
        const pdf = await tab.page.pdf({ printBackground: true });
        return { data: pdf.toString('base64') };
      });
    },

    async act(params, call) {
      checkActParams(params);
      return ctx.run(`act ${params.action}`, call, async (current, timeoutMs) => {
        const tab = await focusedTab(ctx, current);
        if (params.ref !== undefined && (await tab.page.getByRef(params.ref).count()) === 0) {
          throw new BrowserError(
            'REF_NOT_FOUND',
            `ref: ${params.ref} names no element of the latest snapshot of this tab; take a new snapshot`,
            { data: { field: 'ref', ref: params.ref } },
          );
        }
        const before = new Set(current.tabs.keys());
        const extra = await performAction(tab.page, params, timeoutMs);
        const opened = [...current.tabs.keys()].filter((id) => !before.has(id));
        const focused = await focusedTab(ctx, current);
        return {
          ok: true as const,
          action: params.action,
          tabId: tab.id,
          url: focused.page.url(),
          title: await titleOf(focused.page),
          ...(opened.length > 0 ? { openedTabIds: opened } : {}),
          ...extra,
        };
      });
    },

    async tabs(call) {
      if (!ctx.session || ctx.session.ended) return { tabs: [] };
      return ctx.run('tabs', call, async (current) => {
        const tabs: TabInfo[] = [];
        for (const tab of current.tabs.values()) {
          tabs.push({
            id: tab.id,
            url: tab.page.url(),
            title: await titleOf(tab.page),
            focused: tab.id === current.focused,
          });
        }
        return { tabs };
      });
    },

    async open(params = {}, call) {
      const url = params.url === undefined ? undefined : await checkUrl(ctx.policy, params.url);
      return ctx.run('open', call, async (current, timeoutMs) => {
        const tab = registerPage(ctx, current, await current.context.newPage());
        const previous = current.focused;
        current.focused = tab.id;
        if (url) {
          try {
            await goto(ctx.now, current, tab, url, 'load', timeoutMs);
          } catch (error) {
            // A tab whose first navigation failed would be an orphan the caller never learnt the id of.
            current.focused = previous;
            await tab.page.close().catch(() => undefined);
            throw error;
          }
        }
        return { tabId: tab.id };
      });
    },

    async focus(params, call) {
      findTab(ctx.session, params.tabId);
      return ctx.run('focus', call, async (current) => {
        const tab = findTab(current, params.tabId);
        await tab.page.bringToFront();
        current.focused = tab.id;
        return { focused: true as const, tabId: tab.id };
      });
    },

    async close(params, call) {
      findTab(ctx.session, params.tabId);
      return ctx.run('close', call, async (current) => {
        const tab = findTab(current, params.tabId);
        await tab.page.close();
        current.tabs.delete(tab.id);
        if (current.focused === tab.id) current.focused = [...current.tabs.keys()].at(-1);
        return { closed: true as const, tabId: tab.id };
      });
    },

    async console() {
      const current = ctx.session;
      const tab = current?.focused === undefined ? undefined : current.tabs.get(current.focused);
      if (!tab) return { entries: [], dropped: 0 };
      return { ...tab.console.read(), tabId: tab.id };
    },
  };
}

/** The focused tab's accessibility snapshot, as a bounded tree or text. */
function snapshotOf(
  ctx: PageContext,
  params: { format?: 'tree' | 'text' | undefined } = {},
  call?: CallOptions,
): Promise<SnapshotResult | SnapshotTextResult> {
  return ctx.run('snapshot', call, async (current, timeoutMs) => {
    const tab = await focusedTab(ctx, current);
    const head = { tabId: tab.id, url: tab.page.url(), title: await titleOf(tab.page) };
    const { maxSnapshotNodes, maxTextLength } = ctx.config;
    if (params.format === 'text') {
      const yaml = await tab.page.ariaSnapshot({ mode: 'ai', timeout: timeoutMs });
      return {
        ...head,
        ...boundSnapshotText(yaml, { maxLines: maxSnapshotNodes, maxLineLength: maxTextLength }),
      };
    }
    const tree = await tab.page.ariaSnapshotJSON({ mode: 'ai', timeout: timeoutMs });
    return { ...head, ...boundSnapshot(tree, { maxNodes: maxSnapshotNodes, maxTextLength }) };
  });
}
