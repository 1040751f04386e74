import { type Logger as SlackLogger, LogLevel as SlackLogLevel, SocketModeClient } from '@slack/socket-mode';
import type { ChannelHealth } from '../adapter.js';
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
  /** Each Events API payload (`{type: 'event_callback', event, …}`), after its envelope was acknowledged. */
  onEventCallback: (payload: Record<string, unknown>) => void;
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
  const client = new SocketModeClient({
    appToken: options.appToken,
    logger: slackLogger(logger, scrub),
    clientOptions: {
      ...(options.apiRoot ? { slackApiUrl: options.apiRoot } : {}),
      // apps.connections.open is retried a few times per reconnect attempt, not the library's 100.
      retryConfig: { retries: 5, factor: 1.5, maxTimeout: 10_000 },
      timeout: 30_000,
    },
  });
  client.on('connected', () => {
    health.state = 'connected';
    health.lastOkAt = options.now();
  });
  client.on('reconnecting', () => {
    health.state = 'reconnecting';
  });
  client.on('disconnected', () => {
    if (health.state !== 'stopped') health.state = 'reconnecting';
  });
  client.on(
    'slack_event',
    async (args: { ack: () => Promise<void>; type: string; body?: Record<string, unknown> }) => {
      try {
        // The acknowledgement comes first: the agent turn may take longer than Slack waits.
        await args.ack();
      } catch (err) {
        logger.warn(
          { err: scrubbedMessage(err, scrub), errorKind: 'network', hint: 'Slack redelivers the envelope' },
          'slack socket mode ack failed',
        );
        return;
      }
      if (args.type === 'events_api' && args.body?.type === 'event_callback')
        options.onEventCallback(args.body);
    },
  );
  health.state = 'reconnecting';
  // Not awaited: the daemon's start must not wait on Slack; the client retries on its own.
  client.start().catch((err: unknown) => {
    health.state = 'error';
    health.lastError = scrubbedMessage(err, scrub);
    logger.error(
      {
        err: health.lastError,
        errorKind: 'auth',
        hint: 'check channels.slack.appToken (an xapp- token with connections:write) and apiBaseUrl',
      },
      'slack socket mode could not connect',
    );
  });
  return {
    async stop() {
      health.state = 'stopped';
      await client.disconnect().catch(() => undefined);
    },
  };
}

/** The library's logger interface onto ours: warnings and errors kept (scrubbed), chatter dropped. */
function slackLogger(logger: ChannelsLogger, scrub: (text: string) => string): SlackLogger {
  let level = SlackLogLevel.WARN;
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
