import { z } from 'zod';
import type { BrowserLogger } from './logger.js';

const viewportSchema = z
  .object({
    /** @default 1280 */
    width: z.number().int().min(100).max(7680).default(1280),
    /** @default 720 */
    height: z.number().int().min(100).max(4320).default(720),
  })
  .strict();

/**
 * The `browser` section of the agentd config file. `BrowserService.applyConfig` applies a new
 * section in place: per-call keys at once, launch keys (executable, profile, network policy,
 * viewport, extra switches) by stopping a running browser so the next call launches it anew.
 */
export const browserSectionSchema = z
  .object({
    /**
     * Chromium or Chrome executable. When absent, well-known system locations and `PATH`
     * are searched (`chromium`, `chromium-browser`, `google-chrome-stable`, `google-chrome`).
     */
    executablePath: z.string().min(1).optional(),
    /**
     * Browser profile (`--user-data-dir`); a relative path is relative to the data directory.
     * @default 'browser-profile'
     */
    profileDir: z.string().min(1).default('browser-profile'),
    /**
     * Keep cookies and storage between launches. Off, the profile is emptied at every launch,
     * so a killed browser never leaves a lock or state behind for the next one.
     * @default false
     */
    keepProfile: z.boolean().default(false),
    /**
     * Allow pages to reach loopback, private, link-local and other non-public addresses.
     * Off, every request (navigation, redirect hop, subresource, WebSocket) passes an
     * in-process proxy that resolves the host once, checks every address and connects only
     * to a checked one.
     * @default false
     */
    allowPrivateNetwork: z.boolean().default(false),
    /**
     * Hosts exempt from the private-address check while `allowPrivateNetwork` is off:
     * `hostname` (any port) or `hostname:port`, e.g. an intranet wiki.
     * @default []
     */
    allowedHosts: z.array(z.string().min(1).max(300)).max(1000).default([]),
    /**
     * Upper bound on every call (navigation, snapshot, action, screenshot, ...), in ms.
     * @default 30000
     */
    timeoutMs: z.number().int().min(100).max(600_000).default(30_000),
    /**
     * Upper bound on launching the browser, in ms.
     * @default 30000
     */
    launchTimeoutMs: z.number().int().min(1000).max(600_000).default(30_000),
    /**
     * How long a browser that let a call time out gets to answer a health probe before it is killed, in ms.
     * @default 5000
     */
    probeTimeoutMs: z.number().int().min(100).max(60_000).default(5000),
    /** Page viewport in CSS pixels. @default { width: 1280, height: 720 } */
    viewport: viewportSchema.default({ width: 1280, height: 720 }),
    /**
     * Console entries kept per tab; older ones are dropped first.
     * @default 500
     */
    maxConsoleEntries: z.number().int().min(1).max(100_000).default(500),
    /**
     * Nodes kept in one accessibility snapshot; the rest is cut and `truncated` is set.
     * @default 2000
     */
    maxSnapshotNodes: z.number().int().min(10).max(100_000).default(2000),
    /**
     * Characters kept of one text or name in a snapshot, and of one console entry.
     * @default 2000
     */
    maxTextLength: z.number().int().min(20).max(1_000_000).default(2000),
    /**
     * Extra Chromium command-line switches, appended after the built-in headless set.
     * @default []
     */
    extraArgs: z.array(z.string().min(1)).max(100).default([]),
  })
  .strict();

/** The parsed `browser` config section (defaults filled in). */
export type BrowserSection = z.output<typeof browserSectionSchema>;

/** Resolves a host name to its IP addresses (all of them); used by the private-address check. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

/** @internal The validated form of {@link BrowserServiceOptions}. */
export const browserServiceOptionsSchema = browserSectionSchema.extend({
  dataDir: z.string().min(1).optional(),
});

/** Options for {@link createBrowserService}: the `browser` config section plus what the host injects. */
export interface BrowserServiceOptions extends Partial<Omit<BrowserSection, 'viewport'>> {
  /** Viewport in CSS pixels. @default { width: 1280, height: 720 } */
  viewport?: { width?: number; height?: number } | undefined;
  /**
   * Base for a relative `profileDir`.
   * @default a fresh directory under the OS temp dir
   */
  dataDir?: string | undefined;
  /** Logger (pino-compatible). @default a no-op logger */
  logger?: BrowserLogger | undefined;
  /** Clock for console timestamps. @default Date.now */
  now?: (() => number) | undefined;
  /** Id source for tabs. @default 8 random hex characters */
  randomId?: (() => string) | undefined;
  /** Host resolution for the private-address check. @default `dns.lookup` with `all: true` */
  resolveHost?: ResolveHost | undefined;
}
