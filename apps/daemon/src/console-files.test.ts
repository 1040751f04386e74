import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleFiles } from './console-files.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A server answering every request through the console files of `dir`, 404 otherwise. */
async function serve(dir: string): Promise<string> {
  const files = createConsoleFiles(dir);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (files.matches(path, req.method)) files.handle(req, res, path);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** GET with the path sent as written (fetch would normalise `..` away before sending). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/`, { path }, (res) => {
      let body = '';
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-console-files-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('console files', () => {
  it('answers 503 with a page saying how to build while the console is not built, then serves it', async () => {
    const dir = tempDir();
    const url = await serve(join(dir, 'dist'));
    const missing = await fetch(`${url}/`);
    expect(missing.status).toBe(503);
    expect(missing.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await missing.text()).toContain('pnpm@10 build');
    mkdirSync(join(dir, 'dist', 'assets'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'index.html'), '<!doctype html><title>x</title>');
    writeFileSync(join(dir, 'dist', 'assets', 'index-abc.js'), 'export {};');
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const script = await fetch(`${url}/assets/index-abc.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toContain('immutable');
    expect(await script.text()).toBe('export {};');
    // A file added by a rebuild while serving is found.
    writeFileSync(join(dir, 'dist', 'assets', 'chat-def.js'), 'export const a = 1;');
    expect((await fetch(`${url}/assets/chat-def.js`)).status).toBe(200);
  });

  it('serves only files of the build: no traversal, no symlink, no other method', async () => {
    const dir = tempDir();
    const dist = join(dir, 'dist');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), 'page');
    writeFileSync(join(dir, 'secret.txt'), 'do not serve');
    symlinkSync(join(dir, 'secret.txt'), join(dist, 'assets', 'link.txt'));
    const url = await serve(dist);
    for (const path of ['/assets/../../secret.txt', '/assets/%2e%2e/%2e%2e/secret.txt', '/assets/link.txt']) {
      const response = await rawGet(url, path);
      expect(response.status).toBe(404);
      expect(response.body).not.toContain('do not serve');
    }
    expect((await fetch(`${url}/`, { method: 'POST' })).status).toBe(404);
    const head = await fetch(`${url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('4');
  });
});
