import { createAnthropicProvider, createOpenAiCompatibleProvider } from '@agentd/agent-runtime';
import { checkChannelCredentials, PLATFORMS, type Platform } from '@agentd/channels';
import { createHttpClient } from '@agentd/client';
import { createMcpToolHost, type McpServerEntry } from '@agentd/mcp';
import type { DaemonConfig } from '../config-schema.js';
import { bounded, type CheckResult, fail, ok, skip, warn } from './checks.js';

/** Resolves `${secret:NAME}` references inside a value; throws naming a missing secret. */
export type ResolveSecrets = <T>(value: T) => Promise<T>;

/** Each configured model provider answers its models call (`GET <baseUrl>/models`) with its key. */
export async function checkProviders(
  config: DaemonConfig,
  resolve: ResolveSecrets,
  timeoutMs: number,
): Promise<CheckResult[]> {
  const entries = Object.entries(config.providers.entries);
  if (entries.length === 0) return [skip('providers', 'none configured: agents use the offline provider')];
  return Promise.all(
    entries.map(([id, configured]) => {
      const name = `provider ${id}`;
      if (configured.type === 'offline') return Promise.resolve(ok(name, 'offline: nothing to reach'));
      const hint = `check providers.entries.${id}.baseUrl and apiKey (the key's secret must be set)`;
      return bounded(name, timeoutMs, hint, async (signal) => {
        const entry = await resolve(configured);
        const options = { id, baseUrl: entry.baseUrl, apiKey: entry.apiKey, headers: entry.headers };
        const provider =
          entry.type === 'anthropic'
            ? createAnthropicProvider(options)
            : createOpenAiCompatibleProvider(options);
        await provider.probe(signal);
        return ok(name, `${entry.type} at ${entry.baseUrl ?? 'its default URL'} answered its models call`);
      });
    }),
  );
}

/** Each enabled chat platform's credentials, asked of the platform itself. */
export async function checkChannels(
  config: DaemonConfig,
  resolve: ResolveSecrets,
  timeoutMs: number,
): Promise<CheckResult[]> {
  const enabled = PLATFORMS.filter((platform) => config.channels[platform].enabled);
  if (enabled.length === 0) return [skip('channels', 'no chat platform enabled')];
  return Promise.all(
    enabled.map((platform: Platform) => {
      const name = `channel ${platform}`;
      const hint = `check channels.${platform} credentials and apiBaseUrl`;
      return bounded(name, timeoutMs, hint, async () => {
        const section = await resolve(config.channels[platform]);
        const answer = await checkChannelCredentials(platform, section, { timeoutMs });
        return answer.ok
          ? ok(name, `credentials belong to ${answer.identity}`)
          : fail(name, answer.reason, hint);
      });
    }),
  );
}

/** Each enabled MCP server connects and lists its tools. */
export async function checkMcpServers(
  config: DaemonConfig,
  resolve: ResolveSecrets,
  timeoutMs: number,
): Promise<CheckResult[]> {
  const servers = Object.entries(config.mcp.servers).filter(([, entry]) => entry.enabled);
  if (servers.length === 0) return [skip('mcp servers', 'none configured')];
  return Promise.all(
    servers.map(([id, entry]) => {
      const name = `mcp ${id}`;
      const hint = `check mcp.servers.${id} (${'command' in entry ? 'command, args and env' : 'url and headers'})`;
      return bounded(name, Math.max(timeoutMs, entry.connectTimeoutMs), hint, () =>
        connectOnce(id, entry, resolve, hint),
      );
    }),
  );
}

async function connectOnce(
  id: string,
  entry: McpServerEntry,
  resolve: ResolveSecrets,
  hint: string,
): Promise<CheckResult> {
  const name = `mcp ${id}`;
  const tools: string[] = [];
  const host = createMcpToolHost({
    servers: { [id]: { ...entry, start: 'eager' } },
    tools: { register: (added) => tools.push(...added.map((tool) => tool.name)), unregister: () => {} },
    resolveSecrets: (configured) => resolve(configured),
    // One attempt: a doctor reports a failure, it does not retry it.
    backoff: { initialMs: 60_000, maxMs: 60_000 },
  });
  try {
    await host.start();
    for (;;) {
      const status = host.status()[0];
      if (status?.state === 'connected') return ok(name, `connected, ${status.tools.length} tools`);
      if (status?.lastError) return fail(name, status.lastError, hint);
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 50));
    }
  } finally {
    await host.close();
  }
}

/** The running daemon at `url`: its health, and with a token, a `system.ping`. */
export async function checkDaemon(
  url: string,
  token: string | undefined,
  timeoutMs: number,
): Promise<CheckResult> {
  const name = 'daemon';
  const hint = 'start it (agentd start), or pass its address with --url (or AGENTD_URL)';
  return bounded(name, timeoutMs, hint, async (signal) => {
    let health: Response;
    try {
      health = await fetch(new URL('/health', url), { signal });
    } catch {
      return warn(name, `nothing answers at ${url}`, hint);
    }
    if (health.status !== 200)
      return fail(
        name,
        `${url}/health answered ${health.status}`,
        'see the daemon log (data/logs/agentd.log)',
      );
    if (!token) return ok(name, `${url} is healthy (no token given: system.ping not tried)`);
    await createHttpClient({ url, token, requestTimeoutMs: timeoutMs }).call('system.ping');
    return ok(name, `${url} is healthy and answers system.ping`);
  });
}

/** Largest difference from a server's clock that is still fine (signed requests allow about 5 min). */
const SKEW_WARN_MS = 30_000;
const SKEW_FAIL_MS = 120_000;

/**
 * This machine's clock against the `Date` header of the remote services the config names
 * (providers and chat platforms): request signatures (Slack, webhooks) and token expiry are
 * checked against time, and a skewed clock makes them fail in ways that look like bad keys.
 */
export async function checkClockSkew(config: DaemonConfig, timeoutMs: number): Promise<CheckResult> {
  const name = 'clock skew';
  const origins = remoteOrigins(config);
  if (origins.length === 0) return skip(name, 'no remote service configured to compare with');
  for (const origin of origins) {
    const sentAt = Date.now();
    let date: string | null;
    try {
      date = (await fetch(origin, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs) })).headers.get(
        'date',
      );
    } catch {
      continue;
    }
    const receivedAt = Date.now();
    if (!date) continue;
    // The header has whole seconds: compare with the middle of the round trip, allowing that second.
    const skew = Math.abs(Date.parse(date) + 500 - (sentAt + receivedAt) / 2);
    const detail = `${Math.round(skew / 1000)} s from ${origin}`;
    const hint = 'synchronise the clock (systemd-timesyncd, chrony or ntpd)';
    if (skew > SKEW_FAIL_MS) return fail(name, detail, hint);
    if (skew > SKEW_WARN_MS) return warn(name, detail, hint);
    return ok(name, `within ${Math.ceil(SKEW_WARN_MS / 1000)} s of ${origin}`);
  }
  return warn(
    name,
    `no configured service answered with a Date header (${origins.join(', ')})`,
    'check the network',
  );
}

const PLATFORM_ROOTS: Record<Platform, string> = {
  telegram: 'https://api.telegram.org',
  discord: 'https://discord.com',
  slack: 'https://slack.com',
  whatsapp: 'https://graph.facebook.com',
};

function remoteOrigins(config: DaemonConfig): string[] {
  const urls: string[] = [];
  for (const entry of Object.values(config.providers.entries)) {
    if (entry.type === 'openai-compatible' && entry.baseUrl) urls.push(entry.baseUrl);
    if (entry.type === 'anthropic') urls.push(entry.baseUrl ?? 'https://api.anthropic.com');
  }
  for (const platform of PLATFORMS) {
    const section = config.channels[platform];
    if (section.enabled) urls.push(section.apiBaseUrl ?? PLATFORM_ROOTS[platform]);
  }
  return [...new Set(urls.map((url) => new URL(url).origin))];
}
