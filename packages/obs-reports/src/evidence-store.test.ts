import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '@agentd/storage';
import { makeTempDir, removeTempDir } from '@agentd/evidence/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, openDialectDatabase } from '../test/dialects.js';
import { closeObsEvidence, openObsEvidence } from '../test/obs-evidence.js';
import { auditQuerySchema, createObsEvidence, type ObsEvidence } from './evidence-store.js';

// Every character class the id filter accepts, so only the key name can keep it out.
const PLANTED_SECRET = 'sk-live-PLANTEDsecret0123456789';
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

let dir: string;
let db: Database;
let evidence: ObsEvidence;

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function secretPayload(): Record<string, unknown> {
  return {
    apiKey: PLANTED_SECRET,
    authorization: `Bearer ${PLANTED_SECRET}`,
    sessionToken: PLANTED_SECRET,
    nested: { password: PLANTED_SECRET, clientSecret: PLANTED_SECRET, retries: 2 },
    list: [{ cookie: PLANTED_SECRET, ok: true }],
  };
}

// Every test runs on each dialect: the same body on libsql and on PostgreSQL.
describe.each(DIALECTS)('on %s', (dialect) => {
  beforeEach(async () => {
    dir = makeTempDir('obs-evidence-');
    ({ db, evidence } = await openObsEvidence(dir, { now: () => T0 }, dialect));
  });

  afterEach(async () => {
    await closeObsEvidence({ db, evidence });
    removeTempDir(dir);
  });

  describe('createObsEvidence', () => {
    it('keeps numbers, booleans, nulls and short ids of a payload and drops text, long strings and functions', async () => {
      evidence.record('tool:called', {
        sessionKey: 'web:chat-1',
        agentId: 'helper',
        count: 3,
        ratio: 0.5,
        ok: false,
        none: null,
        toolCallId: 'call-42',
        message: 'the customer asked about their invoice',
        longId: 'a'.repeat(129),
        notFinite: Number.POSITIVE_INFINITY,
        callback: () => 1,
        'bad key': 1,
        nested: { depth: 1, deeper: { deepest: { gone: 1 } }, text: 'two words' },
        items: Array.from({ length: 40 }, (_, i) => i),
      });
      const { events, counts } = await evidence.diagnostics();
      expect(counts).toEqual({ 'tool:called': 1 });
      expect(events).toHaveLength(1);
      const [event] = events;
      expect(event).toMatchObject({
        category: 'tool:called',
        sessionKey: 'web:chat-1',
        agentId: 'helper',
        ts: T0,
      });
      expect(event?.data).toEqual({
        agentId: 'helper',
        count: 3,
        items: Array.from({ length: 32 }, (_, i) => i),
        nested: { deeper: {}, depth: 1 },
        none: null,
        ok: false,
        ratio: 0.5,
        sessionKey: 'web:chat-1',
        toolCallId: 'call-42',
      });
    });

    it('never stores or returns a value under a credential-named key, in diagnostics or audit rows', async () => {
      evidence.sink.emit('provider:called', { sessionKey: 's-1', ...secretPayload() });
      evidence.sink.emit('audit:event', {
        kind: 'secret_access',
        classification: 'sensitive',
        outcome: 'allowed',
        severity: 'warning',
        sessionKey: 's-1',
        ...secretPayload(),
      });
      const { events } = await evidence.diagnostics();
      const audit = await evidence.audit();
      expect(events).toHaveLength(1);
      expect(audit).toHaveLength(1);
      expect(events[0]?.data).toEqual({ list: [{ ok: true }], nested: { retries: 2 }, sessionKey: 's-1' });
      expect(audit[0]?.refs).toEqual({ list: [{ ok: true }], nested: { retries: 2 } });
      expect(JSON.stringify([events, audit])).not.toContain('PLANTED');

      const stored = await db.query<{ text: string }>(
        'SELECT data AS text FROM obs_diagnostics UNION ALL SELECT refs AS text FROM obs_audit',
      );
      expect(stored).toHaveLength(2);
      for (const row of stored) expect(row.text).not.toContain('PLANTED');

      await closeObsEvidence({ db, evidence });
      const files = filesUnder(dir);
      // The database is a file of the directory on libsql only.
      if (dialect === 'libsql') expect(files.length).toBeGreaterThan(0);
      for (const file of files) expect(readFileSync(file).includes('PLANTED')).toBe(false);
      // Reopen so afterEach closes a live handle.
      db = await openDialectDatabase(dialect, dir);
      evidence = createObsEvidence({ db });
    });

    it('writes closed-enum fallbacks for audit fields that are not tokens', async () => {
      evidence.sink.emit('audit:event', { kind: 'Not A Token', outcome: 42, agentId: 'has spaces in it' });
      evidence.sink.emit('capability:audited', { timestamp: T0 - 5 });
      const rows = await evidence.audit();
      expect(
        rows.map(({ kind, classification, outcome, severity, ts }) => ({
          kind,
          classification,
          outcome,
          severity,
          ts,
        })),
      ).toEqual([
        { kind: 'other', classification: 'unclassified', outcome: 'unknown', severity: 'info', ts: T0 },
        {
          kind: 'capability',
          classification: 'unclassified',
          outcome: 'unknown',
          severity: 'info',
          ts: T0 - 5,
        },
      ]);
      expect(rows[0]).not.toHaveProperty('agentId');
    });
  });

  describe('createObsEvidence', () => {
    describe('audit', () => {
      beforeEach(() => {
        const rows = [
          ['tool_call', 'internal', 'allowed', 'info', 'alpha', 's-a'],
          ['tool_call', 'external', 'denied', 'warning', 'alpha', 's-b'],
          ['secret_access', 'sensitive', 'allowed', 'critical', 'beta', 's-a'],
          ['config_change', 'internal', 'failed', 'warning', 'beta', 's-c'],
        ] as const;
        rows.forEach(([kind, classification, outcome, severity, agentId, sessionKey], i) => {
          evidence.sink.emit('audit:event', {
            timestamp: T0 + i * 1000,
            kind,
            classification,
            outcome,
            severity,
            agentId,
            sessionKey,
            seq: i,
          });
        });
      });

      const seqs = async (query: Parameters<ObsEvidence['audit']>[0]) =>
        (await evidence.audit(query)).map((row) => row.refs.seq);

      it('returns every row newest first without filters', async () => {
        expect(await seqs({})).toEqual([3, 2, 1, 0]);
        const [newest] = await evidence.audit();
        expect(newest).toEqual({
          id: expect.any(Number),
          ts: T0 + 3000,
          kind: 'config_change',
          classification: 'internal',
          outcome: 'failed',
          severity: 'warning',
          agentId: 'beta',
          sessionKey: 's-c',
          refs: { seq: 3 },
        });
      });

      it('keeps rows at or after sinceMs and strictly before untilMs', async () => {
        expect(await seqs({ sinceMs: T0 + 1000 })).toEqual([3, 2, 1]);
        expect(await seqs({ untilMs: T0 + 2000 })).toEqual([1, 0]);
        expect(await seqs({ sinceMs: T0 + 1000, untilMs: T0 + 3000 })).toEqual([2, 1]);
      });

      it('filters by agentId, sessionKey, kind, classification, outcome and severity', async () => {
        expect(await seqs({ agentId: 'alpha' })).toEqual([1, 0]);
        expect(await seqs({ sessionKey: 's-a' })).toEqual([2, 0]);
        expect(await seqs({ kind: 'tool_call' })).toEqual([1, 0]);
        expect(await seqs({ classification: 'internal' })).toEqual([3, 0]);
        expect(await seqs({ outcome: 'allowed' })).toEqual([2, 0]);
        expect(await seqs({ severity: 'warning' })).toEqual([3, 1]);
        expect(await seqs({ agentId: 'beta', severity: 'warning' })).toEqual([3]);
        expect(await seqs({ kind: 'tool_call', outcome: 'failed' })).toEqual([]);
      });

      it('rejects unknown filters and non-positive limits at the schema', () => {
        expect(auditQuerySchema.safeParse({ actor: 'x' }).success).toBe(false);
        expect(auditQuerySchema.safeParse({ limit: 0 }).success).toBe(false);
        expect(auditQuerySchema.safeParse({ limit: 5000, severity: 'info' }).success).toBe(true);
      });
    });

    it('returns at most 200 audit rows by default and clamps a larger limit to 1000', async () => {
      for (let i = 0; i < 1005; i++) evidence.sink.emit('audit:event', { timestamp: T0 + i, seq: i });
      const byDefault = await evidence.audit();
      expect(byDefault).toHaveLength(200);
      expect(byDefault[0]?.refs.seq).toBe(1004);
      expect(await evidence.audit({ limit: 7 })).toHaveLength(7);
      expect(await evidence.audit({ limit: 1000 })).toHaveLength(1000);
      const clamped = await evidence.audit({ limit: 5000 });
      expect(clamped).toHaveLength(1000);
      expect(clamped.at(-1)?.refs.seq).toBe(5);
    });
  });

  describe('createObsEvidence', () => {
    it('upserts channel activity: counters add, lastActiveAt keeps the latest, type follows the last write', async () => {
      evidence.recordChannelActivity({
        channelId: 'tg-1',
        channelType: 'telegram',
        lastActiveAt: T0 + 500,
        messagesSent: 2,
        messagesReceived: 3,
      });
      evidence.recordChannelActivity({
        channelId: 'tg-1',
        channelType: 'telegram_bot',
        lastActiveAt: T0 + 100,
        messagesSent: 1,
        messagesReceived: 4,
      });
      evidence.recordChannelActivity({
        channelId: 'web-1',
        channelType: 'Web Chat',
        lastActiveAt: T0 + 900,
        messagesSent: 0,
        messagesReceived: 1,
      });
      expect(await evidence.channels()).toEqual([
        {
          channelId: 'web-1',
          channelType: 'unknown',
          lastActiveAt: T0 + 900,
          messagesSent: 0,
          messagesReceived: 1,
        },
        {
          channelId: 'tg-1',
          channelType: 'telegram_bot',
          lastActiveAt: T0 + 500,
          messagesSent: 3,
          messagesReceived: 7,
        },
      ]);
      const count = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM obs_channels');
      expect(count?.n).toBe(2);
    });

    it('records delivery traces and totals them', async () => {
      evidence.recordDelivery({ ts: T0, channelId: 'tg-1', outcome: 'delivered', latencyMs: 100.4 });
      evidence.recordDelivery({
        ts: T0 + 1,
        channelId: 'tg-1',
        outcome: 'failed',
        latencyMs: 300,
        errorKind: 'Rate Limited',
      });
      evidence.recordDelivery({ ts: T0 + 2, channelId: 'web-1', outcome: 'delivered', latencyMs: 200 });
      const traces = await evidence.deliveries({ channelId: 'tg-1' });
      expect(traces.map(({ id: _id, ...rest }) => rest)).toEqual([
        { ts: T0 + 1, channelId: 'tg-1', outcome: 'failed', latencyMs: 300, errorKind: 'other' },
        { ts: T0, channelId: 'tg-1', outcome: 'delivered', latencyMs: 100 },
      ]);
      expect(await evidence.deliveryStats()).toEqual({
        total: 3,
        successes: 2,
        failures: 1,
        avgLatencyMs: 200,
      });
    });

    it('empties a table on reset and reports the rows removed, and 0 for an absent billing table', async () => {
      evidence.recordDelivery({ ts: T0, channelId: 'tg-1', outcome: 'delivered', latencyMs: 1 });
      evidence.recordDelivery({ ts: T0, channelId: 'tg-1', outcome: 'delivered', latencyMs: 1 });
      expect(await evidence.reset('delivery')).toBe(2);
      expect(await evidence.deliveries({})).toEqual([]);
      expect(await evidence.reset('billing')).toBe(0);
    });

    it('rejects options without a database', () => {
      expect(() => createObsEvidence({} as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS' }),
      );
    });
  });
});
