import type { AgentTool, DefineTool } from '@agentd/contracts';
import type { BrowserService } from './browser-service.js';
import { browserParamSchemas } from './params.js';

export type { AgentTool, ToolContext } from '@agentd/contracts';

/** One tool of the list below; see {@link DefineTool}. */
const tool: DefineTool = (name, description, params, handler) => ({ name, description, params, handler });

/**
 * The browser as agent tools, one per action of the `browser` namespace. The snapshot
 * tool answers in the compact text form (one line per node with `[ref=…]`), which costs
 * a model far fewer tokens than the tree; `browser_act` takes those refs.
 */
export function createBrowserTools(service: BrowserService): AgentTool[] {
  const s = browserParamSchemas;
  return [
    tool('browser_status', 'Whether the browser runs, the focused tab URL and the tab count.', s.none, () =>
      service.status(),
    ),
    tool(
      'browser_navigate',
      'Load a URL in the focused tab; returns the final URL (after redirects), title and HTTP status.',
      s.navigate,
      (params, context) => service.navigate(params, { signal: context.signal }),
    ),
    tool(
      'browser_snapshot',
      'Accessibility snapshot of the focused tab: one line per element with role, name and [ref=…] for browser_act.',
      s.snapshot,
      (params, context) => service.snapshot({ format: params.format ?? 'text' }, { signal: context.signal }),
    ),
    tool(
      'browser_act',
      'Act on the focused tab: click, type, fill, press, select, hover, scroll or wait, targeting an element by ref (from the latest snapshot), selector or visible text.',
      s.act,
      (params, context) => service.act(params, { signal: context.signal }),
    ),
    tool(
      'browser_screenshot',
      'PNG screenshot of the focused tab, base64.',
      s.screenshot,
      async (params, context) => ({
        mimeType: 'image/png',
        ...(await service.screenshot(params, { signal: context.signal })),
      }),
    ),
    tool('browser_pdf', 'The focused tab printed to PDF, base64.', s.none, async (_params, context) => ({
      mimeType: 'application/pdf',
      ...(await service.pdf({ signal: context.signal })),
    })),
    tool(
      'browser_tabs',
      'Open tabs with id, URL, title and which one has focus.',
      s.none,
      (_params, context) => service.tabs({ signal: context.signal }),
    ),
    tool('browser_open', 'Open a new tab (optionally at a URL) and focus it.', s.open, (params, context) =>
      service.open(params, { signal: context.signal }),
    ),
    tool('browser_focus', 'Focus a tab by id.', s.tab, (params, context) =>
      service.focus(params, { signal: context.signal }),
    ),
    tool('browser_close', 'Close a tab by id.', s.tab, (params, context) =>
      service.close(params, { signal: context.signal }),
    ),
    tool('browser_console', 'Console messages of the focused tab (level, text, timestamp).', s.none, () =>
      service.console(),
    ),
    tool('browser_stop', 'Close every tab and stop the browser.', s.none, () => service.stop()),
  ];
}
