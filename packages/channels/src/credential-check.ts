import type { Platform } from './config.js';
import { secretScrubber } from './internal/redact.js';

/** The credentials of one platform section, with `${secret:NAME}` references already resolved. */
export interface ChannelCredentials {
  botToken?: string | undefined;
  accessToken?: string | undefined;
  phoneNumberId?: string | undefined;
  apiBaseUrl?: string | undefined;
}

/** What the platform said of the credentials: who they are, or why they were refused. */
export type CredentialCheck = { ok: true; identity: string } | { ok: false; reason: string };

/** Options of {@link checkChannelCredentials}. */
export interface CredentialCheckOptions {
  /** Longest the platform may take to answer, ms. @default 10000 */
  timeoutMs?: number | undefined;
  /** The WhatsApp Graph API version. @default 'v21.0' */
  whatsappApiVersion?: string | undefined;
}

/**
 * Asks the platform who a configured credential belongs to, through the same client library
 * the adapter sends with: Telegram `getMe`, Slack `auth.test`, Discord `GET /users/@me`, and for
 * WhatsApp the phone number object of `phoneNumberId`. Never throws; a refusal's text has every
 * credential scrubbed from it. Each client library is loaded by the check that uses it, so
 * importing this package loads none of them.
 */
export async function checkChannelCredentials(
  platform: Platform,
  credentials: ChannelCredentials,
  options: CredentialCheckOptions = {},
): Promise<CredentialCheck> {
  const scrub = secretScrubber([credentials.botToken, credentials.accessToken]);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const root = credentials.apiBaseUrl?.replace(/\/+$/, '');
  try {
    switch (platform) {
      case 'telegram':
        return await telegram(credentials.botToken, root, timeoutMs);
      case 'slack':
        return await slack(credentials.botToken, root, timeoutMs);
      case 'discord':
        return await discord(credentials.botToken, root, timeoutMs);
      case 'whatsapp':
        return await whatsapp(credentials, root, options.whatsappApiVersion ?? 'v21.0', timeoutMs);
    }
  } catch (error) {
    return { ok: false, reason: scrub(error instanceof Error ? error.message : String(error)) };
  }
}

const missing = (what: string): CredentialCheck => ({ ok: false, reason: `no ${what} configured` });

async function telegram(token: string | undefined, root: string | undefined, timeoutMs: number) {
  if (!token) return missing('botToken');
  const { Api } = await import('grammy');
  const api = new Api(token, {
    timeoutSeconds: Math.ceil(timeoutMs / 1000),
    ...(root ? { apiRoot: root } : {}),
  });
  const me = await api.getMe();
  return { ok: true, identity: `@${me.username} (bot id ${me.id})` } as const;
}

async function slack(token: string | undefined, root: string | undefined, timeoutMs: number) {
  if (!token) return missing('botToken');
  const { LogLevel, WebClient } = await import('@slack/web-api');
  const client = new WebClient(token, {
    ...(root ? { slackApiUrl: `${root}/` } : {}),
    retryConfig: { retries: 0 },
    timeout: timeoutMs,
    logLevel: LogLevel.ERROR,
  });
  const answer = await client.auth.test();
  return {
    ok: true,
    identity: `${answer.user ?? answer.user_id} in ${answer.team ?? answer.team_id}`,
  } as const;
}

async function discord(token: string | undefined, root: string | undefined, timeoutMs: number) {
  if (!token) return missing('botToken');
  const { REST } = await import('@discordjs/rest');
  const rest = new REST({
    version: '10',
    timeout: timeoutMs,
    retries: 0,
    ...(root ? { api: root } : {}),
  }).setToken(token);
  const user = (await rest.get('/users/@me')) as { id: string; username: string };
  return { ok: true, identity: `${user.username} (user id ${user.id})` } as const;
}

async function whatsapp(
  credentials: ChannelCredentials,
  root: string | undefined,
  version: string,
  timeoutMs: number,
): Promise<CredentialCheck> {
  if (!credentials.accessToken) return missing('accessToken');
  if (!credentials.phoneNumberId) return missing('phoneNumberId');
  const url = `${root ?? 'https://graph.facebook.com'}/${version}/${credentials.phoneNumberId}`;
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${credentials.accessToken}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = (await response.json().catch(() => ({}))) as {
    display_phone_number?: string;
    verified_name?: string;
    error?: { message?: string; code?: number };
  };
  if (!response.ok) {
    return {
      ok: false,
      reason: `HTTP ${response.status}${body.error?.message ? `: ${body.error.message}` : ''}`,
    };
  }
  return { ok: true, identity: `${body.verified_name ?? 'phone'} ${body.display_phone_number ?? ''}`.trim() };
}
