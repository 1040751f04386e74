import type { Database } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INVALID_EVIDENCE_CATEGORY } from '@agentd/evidence';
import { makeTempDir, producedPayloads, removeTempDir, warningLogger } from '@agentd/evidence/testing';
import { closeObsEvidence, openObsEvidence } from '../test/obs-evidence.js';
import type { ObsEvidence } from './evidence-store.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

let dir: string;
let db: Database;
let evidence: ObsEvidence;
let warnings: Array<Record<string, unknown>>;

beforeEach(async () => {
  dir = makeTempDir('obs-schemas-');
  const recording = warningLogger();
  warnings = recording.warnings;
  ({ db, evidence } = await openObsEvidence(dir, { now: () => T0, logger: recording.logger }));
});

afterEach(async () => {
  await closeObsEvidence({ db, evidence });
  removeTempDir(dir);
});

const PRODUCED = producedPayloads(T0);

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
