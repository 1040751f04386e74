import { z } from 'zod';
import { BrowserError } from '../errors.js';
import { type BrowserSection, type BrowserServiceOptions, browserServiceOptionsSchema } from '../options.js';

/**
 * Keys a running browser was launched with or enforces through its proxy: a change to one of
 * them takes a relaunch; every other key is read per call (or per new tab) and applies at once.
 */
const launchKeys = [
  'executablePath',
  'profileDir',
  'keepProfile',
  'allowPrivateNetwork',
  'allowedHosts',
  'viewport',
  'extraArgs',
] as const satisfies ReadonlyArray<keyof BrowserSection>;

/** @internal True when `next` differs from `before` in a key the browser was launched with. */
export function launchSettingsChanged(before: BrowserSection, next: BrowserSection): boolean {
  return launchKeys.some((key) => JSON.stringify(before[key]) !== JSON.stringify(next[key]));
}

/**
 * @internal Validates service options (the injected functions left out).
 * @throws {BrowserError} `INVALID_OPTIONS` when they fail validation.
 */
export function parseOptions(options: BrowserServiceOptions) {
  const parsed = browserServiceOptionsSchema.safeParse(stripInjected(options));
  if (!parsed.success) {
    throw new BrowserError('INVALID_OPTIONS', `invalid browser options: ${z.prettifyError(parsed.error)}`, {
      data: { issues: parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message })) },
    });
  }
  return parsed.data;
}

function stripInjected(options: BrowserServiceOptions): Record<string, unknown> {
  const { logger: _logger, now: _now, randomId: _randomId, resolveHost: _resolveHost, ...rest } = options;
  return Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
}
