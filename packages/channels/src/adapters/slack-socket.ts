import type { Logger as SlackLogger, LogLevel as SlackLogLevel, SocketModeClient } from '@slack/socket-mode';
import type { ChannelHealth } from '../adapter.js';
import { markDown } from '../internal/platform-call.js';
import { scrubbedMessage } from '../internal/redact.js';
import type { ChannelsLogger } from '../logger.js';

/** Options of {@link connectSocketMode}. */
export interface SocketModeConnection {
  /** The app-level token (`xapp-…`, scope `connections:write`) `apps.connections.open` takes. */
  appToken: string;
  /** The Web API root `apps.connections.open` is called at (the WebSocket URL comes from its answer). */
  apiRoot?: string | undefined;
  health: ChannelHealth;
  scrub: (text: string) => string;
  logger: ChannelsLogger;
  now: () => number;
  /**
   * Each Events API payload (`{type: 'event_callback', event, …}`); its envelope is acknowledged
   * once this resolves (the message recorded), and left for Slack to redeliver when it rejects.
   */
  onEventCallback: (payload: Record<string, unknown>) => Promise<void>;
}

/** A running Socket Mode connection. */
export interface SocketModeHandle {
  stop(): Promise<void>;
}

/**
 * Slack's Socket Mode through `@slack/socket-mode`: `apps.connections.open` over the Web API
 * (at `apiRoot`), then the WebSocket it names: `hello`, `events_api` envelopes acknowledged by
 * their `envelope_id` before the event is handled (Slack redelivers an envelope not acknowledged
 * within 3 s), `disconnect` answered by reconnecting with a fresh URL. The client library owns
 * pings, timeouts and reconnection; health follows its state events.
 */
export function connectSocketMode(options: SocketModeConnection): SocketModeHandle {
  const { health, scrub, logger } = options;
  let client: SocketModeClient | undefined;
  let stopped = false;
  health.state = 'reconnecting';
  // Loaded on first use: a daemon without Socket Mode never loads the client (nor undici).
  const ready = import('@slack/socket-mode')
    .then(({ SocketModeClient: Client }) => {
      if (stopped) return;
      client = new Client({
        appToken: options.appToken,
        logger: slackLogger(logger, scrub),
        clientOptions: {
          ...(options.apiRoot ? { slackApiUrl: options.apiRoot } : {}),
          // apps.connections.open is retried a few times per reconnect attempt, not the library's 100.
          retryConfig: { retries: 5, factor: 1.5, maxTimeout: 10_000 },
          timeout: 30_000,
        },
      });
      wire(client, options);
      // Not awaited: the daemon's start must not wait on Slack; the client retries on its own.
      client.start().catch((err: unknown) => failed(err, options));
    })
    .catch((err: unknown) => failed(err, options));
  return {
    async stop() {
      stopped = true;
      health.state = 'stopped';
      await ready;
      await client?.disconnect().catch(() => undefined);
    },
  };
}

/** Health follows the client's state events; each envelope is handled (recorded), then acknowledged. */
function wire(client: SocketModeClient, options: SocketModeConnection): void {
  const { health, scrub, logger } = options;
  client.on('connected', () => {
    health.state = 'connected';
    health.lastOkAt = options.now();
  });
  client.on('reconnecting', () => {
    if (health.state !== 'stopped') health.state = 'reconnecting';
  });
  client.on('disconnected', () => {
    if (health.state !== 'stopped') health.state = 'reconnecting';
  });
  client.on(
    'slack_event',
    async (args: { ack: () => Promise<void>; type: string; body?: Record<string, unknown> }) => {
      try {
        // The message is recorded, then acknowledged; its agent turn runs after (it may take
        // longer than the 3 s Slack waits for the ack).
        if (args.type === 'events_api' && args.body?.type === 'event_callback')
          await options.onEventCallback(args.body);
      } catch (err) {
        logger.warn(
          { err: scrubbedMessage(err, scrub), errorKind: 'resource', hint: 'Slack redelivers the envelope' },
          'slack event not recorded; left unacknowledged',
        );
        return;
      }
      try {
        await args.ack();
      } catch (err) {
        logger.warn(
          { err: scrubbedMessage(err, scrub), errorKind: 'network', hint: 'Slack redelivers the envelope' },
          'slack socket mode ack failed',
        );
      }
    },
  );
}

/** A connection that could not start (a refused token, the client failing to load). */
function failed(err: unknown, options: SocketModeConnection): void {
  if (options.health.state === 'stopped') return;
  options.logger.error(
    {
      err: markDown(options.health, options.scrub, err),
      errorKind: 'auth',
      hint: 'check channels.slack.appToken (an xapp- token with connections:write) and apiBaseUrl',
    },
    'slack socket mode could not connect',
  );
}

/** The library's logger interface onto ours: warnings and errors kept (scrubbed), chatter dropped. */
function slackLogger(logger: ChannelsLogger, scrub: (text: string) => string): SlackLogger {
  let level = 'warn' as SlackLogLevel;
  const text = (parts: unknown[]) => scrub(parts.map((part) => String(part)).join(' '));
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...parts) =>
      logger.warn({ errorKind: 'network', hint: 'slack socket mode reconnects on its own' }, text(parts)),
    error: (...parts) =>
      logger.error(
        { errorKind: 'network', hint: 'check channels.slack.appToken and apiBaseUrl' },
        text(parts),
      ),
    setLevel: (next) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
