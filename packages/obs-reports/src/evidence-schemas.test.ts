import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deriveHealthSignal, EVIDENCE_SCHEMAS, INVALID_EVIDENCE_CATEGORY } from './evidence-schemas.js';
import { createObsEvidence, type ObsEvidence } from './evidence-store.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

let dir: string;
let db: Database;
let evidence: ObsEvidence;
const warnings: Array<Record<string, unknown>> = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'obs-schemas-'));
  db = await openDatabase({ dataDir: dir });
  warnings.length = 0;
  const logger = {
    warn: (fields: Record<string, unknown>) => warnings.push(fields),
    info: () => undefined,
    error: () => undefined,
    debug: () => undefined,
  };
  evidence = createObsEvidence({ db, now: () => T0, logger: logger as never });
  await evidence.start();
});

afterEach(async () => {
  await evidence.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

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

describe('createObsEvidence', () => {
  it('stores a malformed payload only as an evidence:invalid row naming the category and field, and warns once', async () => {
    for (let i = 0; i < 3; i++)
      evidence.sink.emit('tool:breaker', { sessionKey: 'web:chat-1', toolName: 'fetch', event: 'exploded' });
    await evidence.flush();
    const { events, counts } = await evidence.diagnostics({});
    expect(counts['tool:breaker']).toBeUndefined();
    expect(counts[INVALID_EVIDENCE_CATEGORY]).toBe(3);
    expect(events[0]?.data).toEqual({ category: 'tool:breaker', field: 'event', code: 'invalid_value' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ category: 'tool:breaker', field: 'event', errorKind: 'validation' });
  });

  it('derives the pipeline_authoring and cron_wake_gate health rows from their events', async () => {
    evidence.sink.emit('pipeline:authored', PRODUCED['pipeline:authored'] as Record<string, unknown>);
    evidence.sink.emit('pipeline:authored', { ...PRODUCED['pipeline:authored'], capabilityClass: 'mid' });
    evidence.sink.emit('pipeline:authored', { ...PRODUCED['pipeline:authored'], valid: true });
    evidence.sink.emit('pipeline:authored', { ...PRODUCED['pipeline:authored'], excluded: 'empty_define' });
    evidence.sink.emit('cron:fired', PRODUCED['cron:fired'] as Record<string, unknown>);
    evidence.sink.emit('cron:fired', { ...PRODUCED['cron:fired'], gateOutcome: 'skip' });
    await evidence.flush();
    const { events, counts } = await evidence.diagnostics({});
    expect(counts).toMatchObject({
      'pipeline:authored': 4,
      pipeline_authoring: 1,
      'cron:fired': 2,
      cron_wake_gate: 1,
    });
    expect(events.find((row) => row.category === 'pipeline_authoring')?.data).toEqual({
      agentId: 'helper',
      capabilityClass: 'small',
      invalidReason: 'parse',
      timestamp: T0,
    });
    expect(events.find((row) => row.category === 'cron_wake_gate')?.data).toEqual({
      jobId: 'job-1',
      agentId: 'helper',
      gateOutcome: 'failed-open',
      gateFailure: 'timeout',
      timestamp: T0,
    });
  });

  it('drops channel activity and delivery traces that do not match their schema', async () => {
    evidence.recordChannelActivity({
      channelId: 'web',
      channelType: 'web',
      lastActiveAt: T0,
      messagesSent: -1,
      messagesReceived: 1,
    });
    evidence.recordDelivery({ ts: T0, channelId: 'web', outcome: 'lost' as never, latencyMs: 5 });
    evidence.recordChannelActivity({
      channelId: 'web',
      channelType: 'web',
      lastActiveAt: T0,
      messagesSent: 1,
      messagesReceived: 1,
    });
    await evidence.flush();
    expect(await evidence.channels()).toEqual([
      { channelId: 'web', channelType: 'web', lastActiveAt: T0, messagesSent: 1, messagesReceived: 1 },
    ]);
    expect(await evidence.deliveryStats()).toMatchObject({ total: 0 });
    expect(warnings.map((warning) => warning.category)).toEqual(['channel activity', 'delivery trace']);
  });
});

describe('deriveChannelActivity', () => {
  it('turns each completed turn into activity of its channel', async () => {
    const turn = {
      agentId: 'helper',
      sessionKey: 'acme:telegram:u1',
      endReason: 'completed',
      channelType: 'telegram',
    };
    evidence.sink.emit('agent:turn_completed', { ...turn, chatId: 'telegram' });
    evidence.sink.emit('agent:turn_completed', {
      ...turn,
      chatId: 'telegram',
      endReason: 'error',
      timestamp: T0 + 5,
    });
    evidence.sink.emit('agent:turn_completed', { ...turn, sessionKey: 'plain', channelType: 'webchat' });
    // No channel named: no activity.
    evidence.sink.emit('agent:turn_completed', {
      agentId: 'helper',
      sessionKey: 'x',
      endReason: 'completed',
    });
    await evidence.flush();
    expect(await evidence.channels()).toEqual([
      {
        channelId: 'telegram',
        channelType: 'telegram',
        lastActiveAt: T0 + 5,
        messagesSent: 1,
        messagesReceived: 2,
      },
      {
        channelId: 'webchat',
        channelType: 'webchat',
        lastActiveAt: T0,
        messagesSent: 1,
        messagesReceived: 1,
      },
    ]);
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
