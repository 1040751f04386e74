import type { Logger } from './logger.js';

/**
 * What a service takes by injection so the daemon and the tests control it: where it logs, its
 * clock and its source of ids. A package's options interface extends this (or a `Pick` of it)
 * instead of declaring the three again, and keeps its own defaults: a logger that drops
 * everything, `Date.now` and `crypto.randomUUID` unless its options say otherwise.
 */
export interface Injected<L = Logger> {
  /** Where the service logs. @default a logger that drops everything */
  logger?: L | undefined;
  /** Clock, in epoch milliseconds. @default Date.now */
  now?: (() => number) | undefined;
  /** Source of new ids. @default crypto.randomUUID */
  randomId?: (() => string) | undefined;
}
