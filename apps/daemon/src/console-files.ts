import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, resolve, sep } from 'node:path';

/**
 * Headers of every console response. The CSP allows only this origin's own files (no inline
 * script or style element, no third-party origin, no plugin, no framing); the built app loads
 * one module script and one stylesheet from `/assets/` and talks to `/ws`, `/rpc` and
 * `/api/chat/stream` on the same origin.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentd console not built</title></head>
<body><h1>The agentd console is not built</h1>
<p>The daemon is running and answers JSON-RPC on <code>/ws</code> and <code>/rpc</code>, but the
web console's files were not found. Build them with <code>npx -y pnpm@10 build</code> (or
<code>npx -y pnpm@10 --filter @agentd/console build</code>) and reload this page.</p>
</body></html>
`;

/** The console's files as the daemon serves them. */
export interface ConsoleFiles {
  /** Whether `path` is a console path (`/`, `/index.html`, or a built file): GET and HEAD only. */
  matches(path: string, method: string | undefined): boolean;
  /** Answers one console request: the file, 404 for a missing asset, or 503 while not built. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): void;
}

/**
 * Serves the built console from `dir` (Vite's `dist`). Only files found under `dir` are served:
 * the list is read once the build exists, and request paths are looked up in it (never joined
 * onto the file system), so `..`, encoded separators and symlinks lead nowhere. Until the
 * console is built, `/` answers 503 with a page saying how to build it; the daemon runs anyway.
 */
export function createConsoleFiles(dir: string): ConsoleFiles {
  const root = resolve(dir);
  let files: Map<string, string> | undefined;
  const load = (refresh = false): Map<string, string> | undefined => {
    if (files && !refresh) return files;
    if (!existsSync(join(root, 'index.html'))) {
      files = undefined;
      return undefined;
    }
    files = new Map();
    for (const file of listFiles(root)) files.set(`/${relative(root, file).split(sep).join('/')}`, file);
    return files;
  };
  return {
    matches(path, method) {
      if (method !== 'GET' && method !== 'HEAD') return false;
      if (path === '/' || path === '/index.html' || path.startsWith('/assets/')) return true;
      return load()?.has(path) ?? false;
    },
    handle(req, res, path) {
      const built = load();
      if (!built) {
        send(res, req, 503, 'text/html; charset=utf-8', NOT_BUILT_PAGE, { 'retry-after': '30' });
        return;
      }
      const wanted = path === '/' ? '/index.html' : path;
      // A rebuild while the daemon runs names new assets: look once more before answering 404.
      const file = built.get(wanted) ?? load(true)?.get(wanted);
      if (!file) {
        send(res, req, 404, 'text/plain; charset=utf-8', 'not found\n');
        return;
      }
      // Vite names assets by content hash, so they never change; the page itself is re-read.
      const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-store';
      const type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
      send(res, req, 200, type, readFileSync(file), { 'cache-control': cache });
    },
  };
}

function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...CONSOLE_SECURITY_HEADERS,
    'content-type': type,
    'content-length': String(Buffer.byteLength(body)),
    ...extra,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function listFiles(dir: string, depth = 0): string[] {
  // The build is two levels deep (index.html, assets/*); a bound keeps a stray tree cheap.
  if (depth > 4) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    // lstat: a symbolic link is neither a file nor a directory here, so none is followed.
    const stat = lstatSync(full, { throwIfNoEntry: false });
    if (stat?.isDirectory()) found.push(...listFiles(full, depth + 1));
    else if (stat?.isFile()) found.push(full);
  }
  return found;
}

/**
 * Where the daemon looks for the console by default: `apps/console/dist` beside the daemon,
 * the same from its sources (`src/`) and from its bundle (`dist/`).
 */
export function defaultConsoleDir(): string {
  return resolve(import.meta.dirname, '..', '..', 'console', 'dist');
}
