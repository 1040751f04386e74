import { describe, expect, it } from 'vitest';
import { gatewayTransportSchema, WS_MESSAGE_RATE_LIMIT_MAX } from './gateway-transport-schema.js';

describe('gatewayTransportSchema', () => {
  it('fills the decided defaults', () => {
    expect(gatewayTransportSchema.parse({})).toEqual({
      maxBatchSize: 50,
      wsMaxMessageBytes: 1_048_576,
      wsMessageRateLimit: { maxMessages: 120, windowMs: 10_000 },
      maxParamsDepth: 64,
      wsMaxBufferedBytes: 262_144,
      wsSlowClientTimeoutMs: 10_000,
      wsHeartbeatMs: 30_000,
    });
  });

  it('fills a partly given rate limit and accepts 0 to disable heartbeats', () => {
    expect(
      gatewayTransportSchema.parse({ wsMessageRateLimit: { maxMessages: 5 }, wsHeartbeatMs: 0 }),
    ).toMatchObject({
      wsMessageRateLimit: { maxMessages: 5, windowMs: 10_000 },
      wsHeartbeatMs: 0,
    });
  });

  it('accepts maxMessages 0, which turns the rate limiter off', () => {
    expect(
      gatewayTransportSchema.parse({ wsMessageRateLimit: { maxMessages: 0 } }).wsMessageRateLimit,
    ).toEqual({
      maxMessages: 0,
      windowMs: 10_000,
    });
  });

  it('accepts maxMessages up to 100000 and rejects more', () => {
    expect(
      gatewayTransportSchema.parse({ wsMessageRateLimit: { maxMessages: WS_MESSAGE_RATE_LIMIT_MAX } })
        .wsMessageRateLimit.maxMessages,
    ).toBe(100_000);
    const tooMany = gatewayTransportSchema.safeParse({ wsMessageRateLimit: { maxMessages: 100_001 } });
    expect(tooMany.success).toBe(false);
    expect(tooMany.error?.issues[0]).toMatchObject({
      path: ['wsMessageRateLimit', 'maxMessages'],
      code: 'too_big',
    });
  });

  it('rejects non-positive limits', () => {
    expect(gatewayTransportSchema.safeParse({ wsMessageRateLimit: { maxMessages: -1 } }).success).toBe(false);
    expect(gatewayTransportSchema.safeParse({ maxBatchSize: 0 }).success).toBe(false);
    expect(gatewayTransportSchema.safeParse({ wsHeartbeatMs: -1 }).success).toBe(false);
  });
});
