import type { Connection } from './connection.js';

/** A page of the console: a custom element given the connection and the route's parameters. */
export interface PageElement extends HTMLElement {
  conn?: Connection;
  /** Path segments after the page's own, e.g. the session key of an incident report. */
  params?: string[];
}

/** One entry of the navigation. */
export interface PageSpec {
  /** First path segment of the hash route: `#/<path>/<params...>`. */
  path: string;
  title: string;
  /** Shown (and loadable) only with an admin token. */
  admin: boolean;
  /** Left out of the navigation (pages reached from another page, such as an incident report). */
  hidden?: boolean;
  /** Custom element name, defined by the module `load` imports. */
  tag: string;
  /** Loads the page's module on first visit, so the first page stays small. */
  load: () => Promise<unknown>;
}

/**
 * The console's pages, in navigation order. A new page is one more entry here and one module
 * under `pages/`.
 */
export const PAGES: readonly PageSpec[] = [
  {
    path: 'chat',
    title: 'Chat',
    admin: false,
    tag: 'agentd-chat-page',
    load: () => import('./pages/chat-page.js'),
  },
  {
    path: 'sessions',
    title: 'Sessions',
    admin: false,
    tag: 'agentd-sessions-page',
    load: () => import('./pages/sessions-page.js'),
  },
  {
    path: 'fleet',
    title: 'Fleet health',
    admin: true,
    tag: 'agentd-fleet-page',
    load: () => import('./pages/fleet-page.js'),
  },
  {
    path: 'incident',
    title: 'Incident report',
    admin: true,
    hidden: true,
    tag: 'agentd-incident-page',
    load: () => import('./pages/incident-page.js'),
  },
  {
    path: 'approvals',
    title: 'Approvals',
    admin: true,
    tag: 'agentd-approvals-page',
    load: () => import('./pages/approvals-page.js'),
  },
  {
    path: 'graphs',
    title: 'Graph runs',
    admin: false,
    tag: 'agentd-graph-page',
    load: () => import('./pages/graph-page.js'),
  },
  {
    path: 'runs',
    title: 'Runs',
    admin: true,
    tag: 'agentd-runs-page',
    load: () => import('./pages/runs-page.js'),
  },
  {
    path: 'channels',
    title: 'Channels',
    admin: true,
    tag: 'agentd-channels-page',
    load: () => import('./pages/channels-page.js'),
  },
  {
    path: 'cron',
    title: 'Cron',
    admin: false,
    tag: 'agentd-cron-page',
    load: () => import('./pages/cron-page.js'),
  },
  {
    path: 'memory',
    title: 'Memory',
    admin: false,
    tag: 'agentd-memory-page',
    load: () => import('./pages/memory-page.js'),
  },
  {
    path: 'config',
    title: 'Config',
    admin: true,
    tag: 'agentd-config-page',
    load: () => import('./pages/config-page.js'),
  },
];

/** The page and its parameters for a location hash such as `#/sessions` (unknown: the first page). */
export function resolveRoute(hash: string, admin: boolean): { page: PageSpec; params: string[] } {
  const segments = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((s) => s.length > 0)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  const allowed = PAGES.filter((p) => admin || !p.admin);
  const page = allowed.find((p) => p.path === segments[0]) ?? allowed[0]!;
  return { page, params: page.path === segments[0] ? segments.slice(1) : [] };
}

/** `#/path/param` with each parameter encoded. */
export function href(path: string, ...params: string[]): string {
  return `#/${[path, ...params].map(encodeURIComponent).join('/')}`;
}
