import { describe, expect, it } from 'vitest';
import { deriveHealthSignal, EVIDENCE_SCHEMAS } from './event-schemas.js';
import { producedPayloads } from './testing.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

const PRODUCED = producedPayloads(T0);

describe('EVIDENCE_SCHEMAS', () => {
  it('accepts every payload the packages produce today', () => {
    for (const [category, payload] of Object.entries(PRODUCED)) {
      const schema = EVIDENCE_SCHEMAS[category];
      expect(schema, category).toBeDefined();
      expect(schema?.safeParse(payload).success, category).toBe(true);
    }
  });

  it('rejects a payload that lacks a field the reports read or has a value outside its enum', () => {
    const breaker = EVIDENCE_SCHEMAS['tool:breaker'];
    expect(breaker?.safeParse({ sessionKey: 's', toolName: 't', event: 'exploded' }).success).toBe(false);
    expect(EVIDENCE_SCHEMAS['offload:written']?.safeParse({ sessionKey: 's', bytes: 1 }).success).toBe(false);
    expect(
      EVIDENCE_SCHEMAS['terminal.session_evicted']?.safeParse({
        reason: 'idle',
        idleMs: -1,
        wasProducing: true,
      }).success,
    ).toBe(false);
  });
});

describe('deriveHealthSignal', () => {
  it('answers undefined for events that are no signal', () => {
    expect(deriveHealthSignal('memory:recalled', PRODUCED['memory:recalled'] as never)).toBeUndefined();
    expect(
      deriveHealthSignal('cron:fired', { ...PRODUCED['cron:fired'], gateOutcome: 'wake' }),
    ).toBeUndefined();
  });
});
