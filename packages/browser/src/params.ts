import { z } from 'zod';
import { ACT_ACTIONS } from './internal/actions.js';

/**
 * zod schemas of the parameters of each browser operation, shared by the daemon's
 * `browser.*` methods and the agent tools so both validate alike. The contract's fields
 * come first; `ref`, `timeMs`, `waitUntil` and `format` are additions it leaves room for.
 */
export const browserParamSchemas = {
  none: z.object({}).strict(),
  navigate: z
    .object({
      url: z.string().min(1).max(8192).describe('Absolute http(s) URL to load in the focused tab'),
      waitUntil: z
        .enum(['load', 'domcontentloaded', 'commit'])
        .optional()
        .describe('Page event that ends the navigation (default load)'),
    })
    .strict(),
  snapshot: z
    .object({
      format: z
        .enum(['tree', 'text'])
        .optional()
        .describe('tree: structured nodes (default); text: YAML lines with [ref=…] markers'),
    })
    .strict(),
  screenshot: z
    .object({ fullPage: z.boolean().optional().describe('Whole scrollable page instead of the viewport') })
    .strict(),
  act: z
    .object({
      action: z.enum(ACT_ACTIONS).describe('What to do'),
      selector: z.string().min(1).max(4096).optional().describe('CSS or Playwright selector of the element'),
      text: z
        .string()
        .min(1)
        .max(4096)
        .optional()
        .describe('Visible text of the element (with selector: text it contains)'),
      value: z
        .string()
        .max(100_000)
        .optional()
        .describe(
          'type/fill: the text; press: the key (Enter, Control+A); select: option value or label; scroll: pixels',
        ),
      ref: z
        .string()
        .regex(/^[A-Za-z0-9]{1,32}$/, 'a snapshot reference such as e12')
        .optional()
        .describe('Element reference from the latest snapshot, e.g. e12'),
      timeMs: z.number().int().min(0).max(600_000).optional().describe('wait without a target: milliseconds'),
    })
    .strict(),
  open: z
    .object({ url: z.string().min(1).max(8192).optional().describe('URL to load in the new tab') })
    .strict(),
  tab: z
    .object({ tabId: z.string().min(1).max(64).describe('Id from browser.tabs or browser.open') })
    .strict(),
} as const;
