import { describe, expect, it } from 'vitest';
import { deriveHealthSignal, EVIDENCE_SCHEMAS } from './event-schemas.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

// The payloads the packages emit today, as their source writes them.
const PRODUCED: Record<string, Record<string, unknown>> = {
  'memory:recalled': {
    agentId: 'helper',
    tenant: null,
    lanes: ['fts', 'vector'],
    ftsCandidates: 4,
    vectorCandidates: 0,
    finalCount: 2,
    exact: true,
    reranked: false,
    degraded: true,
    missingEmbeddings: 0,
    durationMs: 3,
    timestamp: T0,
  },
  'memory:reranked': { agentId: null, candidates: 8, fellBack: true, timedOut: true, durationMs: 50 },
  'pipeline:authored': {
    action: 'define',
    origin: 'tool',
    agentId: 'helper',
    capabilityClass: 'small',
    valid: false,
    nodeCount: 0,
    invalidReason: 'parse',
    timestamp: T0,
  },
  'cron:fired': {
    jobId: 'job-1',
    agentId: 'helper',
    trigger: 'schedule',
    status: 'ok',
    catchUp: false,
    gateOutcome: 'failed-open',
    gateDurationMs: 12,
    gateFailure: 'timeout',
    durationMs: 40,
    toolCalls: 0,
    estTurnsSaved: 0,
    timestamp: T0,
  },
  'tool:breaker': {
    sessionKey: 'web:chat-1',
    agentId: 'helper',
    traceId: 'trace-1',
    toolName: 'fetch',
    toolCallId: 'call-3',
    seq: 3,
    event: 'opened',
    consecutiveFailures: 3,
    ts: T0,
  },
  'offload:written': {
    sessionKey: 'web:chat-1',
    agentId: 'helper',
    traceId: 'trace-1',
    toolName: 'fetch',
    toolCallId: 'call-4',
    seq: 4,
    bytes: 200_000,
    diskPathRel: 'obs/offloads/web_chat-1-0123456789abcdef/trace-1-call-4.json',
    resultDigest: 'sha256:0123456789abcdef',
    resolved: true,
  },
  config_posture: { servedBelowConfigured: 1, providersProbed: 1, providersUnreachable: 0, below: {} },
};

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
