import { z } from 'zod';

/** Largest `wsMessageRateLimit.maxMessages`: the most events the gateway's sliding-window limiter tracks. */
export const WS_MESSAGE_RATE_LIMIT_MAX = 100_000;

/**
 * The transport section of the gateway configuration (`gateway.*`), with the defaults the project decided:
 * batches of 50, messages of 1048576 characters, params nested 64 levels, 120 messages per 10 s per connection, heartbeats every 30 s.
 */
export const gatewayTransportSchema = z.object({
  /** Longest batch; a longer one is answered with `-32600`. */
  maxBatchSize: z.number().int().positive().default(50),
  /** Longest WebSocket message in characters, checked before parsing; a longer one is answered with `-32600`. */
  wsMaxMessageBytes: z.number().int().positive().default(1_048_576),
  /**
   * Per-connection sliding-window limit; excess messages are dropped and answered with `-32000`.
   * `maxMessages: 0` turns the limiter off (benchmarks, trusted local clients); at most 100000.
   */
  wsMessageRateLimit: z
    .object({
      // The sliding-window limiter that enforces this keeps one timestamp per
      // message and refuses more than 100000; 0 means no limiter at all.
      maxMessages: z.number().int().nonnegative().max(WS_MESSAGE_RATE_LIMIT_MAX).default(120),
      windowMs: z.number().int().positive().default(10_000),
    })
    .prefault({}),
  /**
   * Deepest nesting of objects and arrays in a request's `params` (`params` is level 1); deeper
   * params are answered with `-32602` naming the path, before any schema recurses into them.
   */
  maxParamsDepth: z.number().int().positive().max(1000).default(64),
  /**
   * Bytes queued for one WebSocket connection past which it stops being read until the queue
   * drains; `0` turns the cap off. A client that stays over it for `wsSlowClientTimeoutMs` is
   * closed with 4009.
   */
  wsMaxBufferedBytes: z.number().int().nonnegative().default(262_144),
  /** How long a WebSocket client may stay over `wsMaxBufferedBytes` before it is closed. */
  wsSlowClientTimeoutMs: z.number().int().positive().default(10_000),
  /** Heartbeat notification interval; `0` disables heartbeats. */
  wsHeartbeatMs: z.number().int().nonnegative().default(30_000),
});

/** The parsed transport section, defaults applied. */
export type GatewayTransportConfig = z.output<typeof gatewayTransportSchema>;
