import type { Locator, Page } from 'playwright-core';
import { BrowserError } from '../errors.js';

/** The actions `act` performs. */
export const ACT_ACTIONS = ['click', 'type', 'fill', 'press', 'select', 'hover', 'scroll', 'wait'] as const;

/** One of {@link ACT_ACTIONS}. */
export type ActAction = (typeof ACT_ACTIONS)[number];

/**
 * What `act` does and to which element. The element is named by `ref` (from the latest
 * snapshot of the tab), by `selector` (a CSS or Playwright selector), by `text` (visible
 * text), or by `selector` and `text` together (elements matching the selector that contain
 * the text). `value` is the input: the text for `type` and `fill`, the key for `press`
 * (`Enter`, `Control+A`), the option value or label for `select`, pixels for `scroll`.
 */
export interface ActParams {
  action: ActAction;
  ref?: string | undefined;
  selector?: string | undefined;
  text?: string | undefined;
  value?: string | undefined;
  /** For `wait` without a target: how long to wait, in ms (bounded by the call timeout). */
  timeMs?: number | undefined;
}

const needsTarget = new Set<ActAction>(['click', 'fill', 'select', 'hover']);
const needsValue = new Set<ActAction>(['type', 'fill', 'press', 'select']);

/** Checks that `params` carries what its action needs, before anything touches the page. */
export function checkActParams(params: ActParams): void {
  if (!(ACT_ACTIONS as readonly string[]).includes(params.action)) {
    throw new BrowserError(
      'INVALID_ACTION',
      `action: unknown action ${JSON.stringify(params.action)}; expected one of ${ACT_ACTIONS.join(', ')}`,
      { data: { field: 'action' } },
    );
  }
  const hasTarget = params.ref !== undefined || params.selector !== undefined || params.text !== undefined;
  if (params.ref !== undefined && (params.selector !== undefined || params.text !== undefined)) {
    throw new BrowserError('INVALID_ACTION', 'ref: give either ref, or selector and/or text, not both', {
      data: { field: 'ref' },
    });
  }
  if (needsTarget.has(params.action) && !hasTarget) {
    throw new BrowserError('INVALID_ACTION', `selector: ${params.action} needs a ref, selector or text`, {
      data: { field: 'selector' },
    });
  }
  if (needsValue.has(params.action) && params.value === undefined) {
    throw new BrowserError('INVALID_ACTION', `value: ${params.action} needs a value`, {
      data: { field: 'value' },
    });
  }
  if (params.action === 'wait' && !hasTarget && params.timeMs === undefined) {
    throw new BrowserError('INVALID_ACTION', 'timeMs: wait needs a ref, selector, text or timeMs', {
      data: { field: 'timeMs' },
    });
  }
  if (params.action === 'scroll' && params.value !== undefined && !/^-?\d+$/.test(params.value)) {
    throw new BrowserError('INVALID_ACTION', 'value: scroll takes a whole number of pixels', {
      data: { field: 'value' },
    });
  }
}

/** The bits of the page's `window` the scroll action uses (the package is built without DOM types). */
interface PageWindow {
  scrollBy(x: number, y: number): void;
  innerHeight: number;
  scrollY: number;
}

function locate(page: Page, params: ActParams): Locator | undefined {
  if (params.ref !== undefined) return page.getByRef(params.ref);
  if (params.selector !== undefined) {
    const base = page.locator(params.selector);
    return params.text === undefined ? base : base.filter({ hasText: params.text });
  }
  if (params.text !== undefined) return page.getByText(params.text);
  return undefined;
}

/** Performs one checked action; returns extra result fields (scroll position). */
export async function performAction(
  page: Page,
  params: ActParams,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const target = locate(page, params);
  const timeout = timeoutMs;
  const value = params.value ?? '';
  switch (params.action) {
    case 'click':
      await (target as Locator).click({ timeout });
      return {};
    case 'hover':
      await (target as Locator).hover({ timeout });
      return {};
    case 'fill':
      await (target as Locator).fill(value, { timeout });
      return {};
    case 'select': {
      const selected = await (target as Locator).selectOption(value, { timeout });
      return { selected };
    }
    case 'type':
      if (target) await target.pressSequentially(value, { timeout });
      else await page.keyboard.type(value);
      return {};
    case 'press':
      if (target) await target.press(value, { timeout });
      else await page.keyboard.press(value);
      return {};
    case 'scroll': {
      if (target && params.value === undefined) {
        await target.scrollIntoViewIfNeeded({ timeout });
      } else {
        const pixels = params.value === undefined ? undefined : Number(params.value);
        await page.evaluate((dy) => {
          const view = globalThis as unknown as PageWindow;
          view.scrollBy(0, dy ?? view.innerHeight);
        }, pixels);
      }
      return { scrollY: await page.evaluate(() => (globalThis as unknown as PageWindow).scrollY) };
    }
    case 'wait':
      if (target) await target.first().waitFor({ state: 'visible', timeout });
      else await page.waitForTimeout(Math.min(params.timeMs ?? 0, timeoutMs));
      return {};
  }
}
