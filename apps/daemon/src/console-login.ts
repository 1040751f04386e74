import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { extractBearer, type TokenStore } from '@agentd/auth-scopes';
import type { SecurityAudit } from '@agentd/evidence/audit';
import { z } from 'zod';
import { CONSOLE_SECURITY_HEADERS } from './console-files.js';

/** The pending one-time login code of a data dir (its hash only), written by `agentd console`. */
const LOGIN_FILE = 'console-login.json';
/** How long a login link works. */
export const CONSOLE_LOGIN_TTL_MS = 10 * 60_000;
/** How long a console session's token lives without a call (each call renews it). */
export const CONSOLE_SESSION_TTL_MS = 8 * 3_600_000;
const MAX_BODY_BYTES = 1024;

const pendingSchema = z
  .object({ codeHash: z.string().regex(/^[0-9a-f]{64}$/), expiresAt: z.number().int() })
  .strict();
const bodySchema = z.object({ code: z.string().min(1).max(200) }).strict();

const hashCode = (code: string): Buffer => createHash('sha256').update(code, 'utf8').digest();

/**
 * Makes a one-time console login code for the data dir: 256 random bits, of which only the
 * SHA-256 goes to `console-login.json` (0600) with its expiry. A new code replaces the last.
 */
export function createConsoleLoginCode(dataDir: string, now: number = Date.now()): string {
  const code = randomBytes(32).toString('base64url');
  const pending = { codeHash: hashCode(code).toString('hex'), expiresAt: now + CONSOLE_LOGIN_TTL_MS };
  const file = join(dataDir, LOGIN_FILE);
  // Written aside and renamed, so a daemon reading it never sees half a file.
  writeFileSync(`${file}.tmp`, JSON.stringify(pending), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  return code;
}

/** Takes the pending code if `code` matches and has not expired; it is removed either way once read. */
function takeCode(dataDir: string, code: string, now: number): boolean {
  const file = join(dataDir, LOGIN_FILE);
  let pending: z.infer<typeof pendingSchema>;
  try {
    pending = pendingSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return false;
  }
  const matches = timingSafeEqual(hashCode(code), Buffer.from(pending.codeHash, 'hex'));
  if (!matches) return false;
  // Single use: the file goes before the token is minted.
  rmSync(file, { force: true });
  return pending.expiresAt > now;
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * `POST /console/login {code}`: exchanges the one-time code of `agentd console` for a new
 * admin (`*`) session token with client id `console`, answered once as `{token, id, expiresAt}`;
 * the console keeps it in the tab's session storage. The token lives in memory only, expires
 * after {@link CONSOLE_SESSION_TTL_MS} without a call (each call renews it) and is listed by
 * `tokens.list` with source `session` and its `expiresAt`. A wrong, used or expired code answers
 * 401 and is audited as a denied authentication.
 *
 * `POST /console/logout` with the session's bearer token revokes it (its sockets close) and
 * answers 204; a token that is not a console session token is left alone (a pasted token is
 * the user's, not the console's), and a missing or unknown one answers 401.
 */
export function consoleLoginHandler(deps: {
  dataDir: string;
  tokens: Pick<TokenStore, 'create' | 'authenticate' | 'list' | 'revoke'>;
  audit: SecurityAudit;
  now?: () => number;
}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const now = deps.now ?? Date.now;
  const answer = (res: ServerResponse, status: number, body: unknown) =>
    res
      .writeHead(status, {
        ...CONSOLE_SECURITY_HEADERS,
        'content-type': 'application/json',
        'cache-control': 'no-store',
      })
      .end(JSON.stringify(body));
  const logout = async (req: IncomingMessage, res: ServerResponse) => {
    const identity = deps.tokens.authenticate(extractBearer(req));
    if (!identity) {
      answer(res, 401, { error: 'no valid token' });
      return;
    }
    const entry = deps.tokens.list().find((token) => token.id === identity.tokenId);
    if (entry?.source === 'session' && entry.clientId === 'console') {
      await deps.tokens.revoke(entry.id).catch(() => undefined);
      deps.audit.emit({
        kind: 'auth',
        classification: 'allowed',
        outcome: 'success',
        severity: 'low',
        transport: 'console',
        reason: 'console_logout',
        caller: entry.id,
      });
    }
    res.writeHead(204, { ...CONSOLE_SECURITY_HEADERS, 'cache-control': 'no-store' }).end();
  };
  return async (req, res) => {
    if (req.method !== 'POST') {
      answer(res, 405, { error: 'use POST' });
      return;
    }
    if (req.url?.split('?')[0] === '/console/logout') {
      await logout(req, res);
      return;
    }
    let code: string;
    try {
      const text = await readBody(req);
      code = bodySchema.parse(JSON.parse(text ?? '')).code;
    } catch {
      answer(res, 400, { error: 'the body must be {"code": "<login code>"}' });
      return;
    }
    if (!takeCode(deps.dataDir, code, now())) {
      deps.audit.emit({
        kind: 'auth',
        classification: 'denied',
        outcome: 'failure',
        severity: 'medium',
        transport: 'console',
        reason: 'invalid_login_code',
      });
      answer(res, 401, { error: 'this login link is wrong, used or expired: run `agentd console` again' });
      return;
    }
    let created: { id: string; token: string; expiresAt?: number };
    try {
      created = await deps.tokens.create({
        scopes: ['*'],
        clientId: 'console',
        id: `console-${randomBytes(4).toString('hex')}`,
        sessionTtlMs: CONSOLE_SESSION_TTL_MS,
      });
    } catch {
      answer(res, 500, { error: 'the token could not be created; see the daemon log' });
      return;
    }
    deps.audit.emit({
      kind: 'auth',
      classification: 'allowed',
      outcome: 'success',
      severity: 'medium',
      transport: 'console',
      reason: 'console_login',
      caller: created.id,
    });
    answer(res, 200, { token: created.token, id: created.id, expiresAt: created.expiresAt });
  };
}
