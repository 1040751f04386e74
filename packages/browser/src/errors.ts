import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link BrowserError} can carry.
 *
 * - `INVALID_OPTIONS`: options given to {@link createBrowserService} failed validation.
 * - `NO_EXECUTABLE`: no Chromium or Chrome was configured or found; the message says how to install one.
 * - `LAUNCH_FAILED`: the browser executable was found but did not start (`cause` has the launcher's error).
 * - `INVALID_URL`: the URL is not absolute http(s) (file:, javascript:, data:, chrome: and friends are refused).
 * - `NAVIGATION_BLOCKED`: the URL, a redirect hop or a request resolved to a loopback, private, link-local
 *   or otherwise non-public address while `allowPrivateNetwork` is off (`data.host`, `data.reason`).
 * - `NAVIGATION_FAILED`: the browser could not load the page (`data.netError`, e.g. `ERR_CONNECTION_REFUSED`).
 * - `TIMEOUT`: the call did not finish within its timeout (`data.timeoutMs`, `data.operation`).
 * - `ABORTED`: the caller's `AbortSignal` fired.
 * - `TAB_NOT_FOUND`: no open tab has the given id (`data.tabId`).
 * - `REF_NOT_FOUND`: a snapshot reference does not name an element of the latest snapshot (`data.ref`).
 * - `INVALID_ACTION`: an `act` call lacks what its action needs (a target, a value) or names an unknown action.
 * - `ACTION_FAILED`: the page refused the action (no such element, several matches, not editable, ...).
 * - `BROWSER_CRASHED`: the browser process exited during the call; the next call starts a new one.
 * - `CLOSED`: the service was shut down.
 */
export type BrowserErrorCode =
  | 'INVALID_OPTIONS'
  | 'NO_EXECUTABLE'
  | 'LAUNCH_FAILED'
  | 'INVALID_URL'
  | 'NAVIGATION_BLOCKED'
  | 'NAVIGATION_FAILED'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'TAB_NOT_FOUND'
  | 'REF_NOT_FOUND'
  | 'INVALID_ACTION'
  | 'ACTION_FAILED'
  | 'BROWSER_CRASHED'
  | 'CLOSED';

/**
 * Options accepted by the {@link BrowserError} constructor. `data`: structured detail for callers and logs.
 */
export type BrowserErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class BrowserError extends AgentdError<BrowserErrorCode> {
  override readonly name = 'BrowserError';
}

/** True when `error` is a {@link BrowserError}, optionally with the given code. */
export const isBrowserError = errorGuard(BrowserError);
