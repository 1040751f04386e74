import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  EvidenceWriter,
  listSessionIndexDays,
  readSessionIndex,
  readTrajectory,
  SESSION_INDEX_DIR,
  sweepEvidence,
  TRAJECTORY_DIR,
} from '@agentd/evidence';
import { indexRecord, tempDirEachTest, writeTurn } from '@agentd/evidence/testing';
import type { Database } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../test/dialects.js';
import { createSessionTables } from '../test/session-tables.js';
import { closeObsEvidence, openObsEvidence } from '../test/obs-evidence.js';
import type { ObsEvidence } from './evidence-store.js';
import { createObsService, type ObsService } from './obs-service.js';

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

const temp = tempDirEachTest('obs-files-', { beforeEach, afterEach });

const jsonOf = (value: unknown) => JSON.stringify(value);

// Every test runs on each dialect: the same body on libsql and on PostgreSQL.
describe.each(DIALECTS)('on %s', (dialect) => {
  describe('createObsService', () => {
    let db: Database;
    let evidence: ObsEvidence;
    let service: ObsService;

    beforeEach(async () => {
      ({ db, evidence } = await openObsEvidence(temp.path, { now: () => T0 + 3 * DAY_MS }, dialect));
      service = createObsService({ db, dataDir: temp.path, evidence, now: () => T0 + 3 * DAY_MS });
    });

    afterEach(() => closeObsEvidence({ db, evidence }));

    it('explain reads the turns whose trajectory lines were lost on later days', async () => {
      const writer = new EvidenceWriter({ dataDir: temp.path });
      const key = 'telegram:chat-7:main';
      await writeTurn(writer, key, 1, T0);
      await writeTurn(writer, 'web:other:main', 1, T0 - DAY_MS);
      // Two days later only the index line lands (the trajectory was at its hard cap).
      await writer.sessionIndex(indexRecord(key, 2, T0 + 2 * DAY_MS));
      // An older day holds only other sessions: explain need not read it.
      expect(await listSessionIndexDays(temp.path)).toHaveLength(3);

      const report = await service.explain({ sessionKey: key });
      expect(report.timing.turnCount).toBe(2);
      expect(report.traceId).toBe(`trace-${key}-2`);
    });

    it('in cluster mode marks the file-based parts of each report as this instance only (partial)', async () => {
      const cluster = createObsService({
        db,
        dataDir: temp.path,
        evidence,
        now: () => T0 + 3 * DAY_MS,
        clusterInstanceId: 'node-a',
      });
      const key = 'telegram:chat-9:main';
      await writeTurn(new EvidenceWriter({ dataDir: temp.path }), key, 1, T0);
      const files = { scope: 'this-instance', instanceId: 'node-a', partial: true };
      expect((await cluster.explain({ sessionKey: key })).coverage?.files).toEqual(files);
      expect((await cluster.fleetHealth({ sinceHours: 96 })).coverage?.files).toEqual(files);
      const missing = await cluster.explain({ sessionKey: 'web:elsewhere:main' });
      expect(missing.suggestedNextSteps.at(-1)).toContain('instance node-a only');
      // A single instance says nothing of the kind.
      expect((await service.explain({ sessionKey: key })).coverage?.files).toBeUndefined();
      expect((await service.fleetHealth({ sinceHours: 96 })).coverage?.files).toBeUndefined();
    });

    it('explain reads the days from the session creation on, even when rotation dropped the oldest trajectory', async () => {
      await createSessionTables(db);
      const key = 'web:rotated:main';
      await db.execute('INSERT INTO agent_sessions (session_key, created_at, updated_at) VALUES (?, ?, ?)', [
        key,
        T0 - DAY_MS,
        T0,
      ]);
      const writer = new EvidenceWriter({ dataDir: temp.path });
      // A line of an earlier session under the same key (deleted, then the key reused): not this session.
      await writer.sessionIndex(indexRecord(key, 1, T0 - 2 * DAY_MS));
      // The first turn's index line remains; its trajectory part was rotated away.
      await writer.sessionIndex(indexRecord(key, 2, T0 - DAY_MS));
      await writeTurn(writer, key, 3, T0);
      const report = await service.explain({ sessionKey: key });
      expect(report.timing.turnCount).toBe(2);
      expect(report.traceId).toBe(`trace-${key}-3`);
    });

    it('explain reads every day for a session with no trajectory', async () => {
      const writer = new EvidenceWriter({ dataDir: temp.path });
      await writer.sessionIndex(indexRecord('web:chat-3:main', 1, T0 - 2 * DAY_MS));
      await writer.sessionIndex(indexRecord('web:chat-3:main', 2, T0));
      const report = await service.explain({ sessionKey: 'web:chat-3:main' });
      expect(report.timing.turnCount).toBe(2);
      expect(report.coverage?.trajectory.found).toBe(false);
    });

    it('explain by trace id finds a turn on an older day and gives the by-session report', async () => {
      const writer = new EvidenceWriter({ dataDir: temp.path });
      await writeTurn(writer, 'web:chat-1:main', 1, T0 - DAY_MS);
      await writeTurn(writer, 'web:chat-2:main', 1, T0);
      const byTrace = await service.explain({ traceId: 'trace-web:chat-1:main-1' });
      const bySession = await service.explain({ sessionKey: 'web:chat-1:main' });
      expect(byTrace.sessionKey).toBe('web:chat-1:main');
      expect(jsonOf(byTrace)).toBe(jsonOf(bySession));
      expect((await service.explain({ traceId: 'trace-web:chat-1' })).likelyRootCause.code).toBe(
        'session_not_found',
      );
    });

    it('fleet health reads the trajectories of every session with tool calls in the window', async () => {
      const writer = new EvidenceWriter({ dataDir: temp.path });
      for (let s = 0; s < 40; s++) await writeTurn(writer, `web:chat-${s}:main`, 1, T0 + 2 * DAY_MS + s, 3);
      const report = await service.fleetHealth({ sinceHours: 24 });
      expect(report.sessions.total).toBe(40);
      expect(report.toolStats).toEqual({
        search: { ok: 40, failed: 0 },
        fetch: { ok: 0, failed: 40 },
        shell: { ok: 40, failed: 0 },
      });
      const read = await readSessionIndex(temp.path, {
        sinceMs: T0 + 2 * DAY_MS - 1,
        untilMs: T0 + 3 * DAY_MS,
      });
      expect(read.records).toHaveLength(40);
    });
  });

  describe('readTrajectory and readSessionIndex over rotated files', () => {
    let db: Database;
    let evidence: ObsEvidence;
    const NOW = T0 + 3 * DAY_MS;

    beforeEach(async () => {
      ({ db, evidence } = await openObsEvidence(temp.path, { now: () => NOW }, dialect));
    });

    afterEach(() => closeObsEvidence({ db, evidence }));

    /** The same turns into `dataDir` through `writer`: 12 sessions over four UTC days. */
    async function writeCorpus(writer: EvidenceWriter): Promise<void> {
      for (let turn = 1; turn <= 6; turn++) {
        for (let s = 0; s < 12; s++) {
          const ts = T0 - DAY_MS + turn * 10 * 3_600_000 + s * 60_000;
          await writeTurn(writer, `web:chat-${s}:main`, turn, ts, 1 + ((s + turn) % 4));
        }
      }
      await writer.flush();
    }

    it('gives byte-identical reports whether or not the files rolled and were gzipped', async () => {
      const plainDir = join(temp.path, 'plain');
      const rotatedDir = join(temp.path, 'rotated');
      await writeCorpus(new EvidenceWriter({ dataDir: plainDir }));
      await writeCorpus(
        new EvidenceWriter({
          dataDir: rotatedDir,
          rotation: { maxSizeBytes: 4000, maxFiles: 100 },
          trajectorySoftCapBytes: 3000,
        }),
      );
      const swept = await sweepEvidence({
        dataDir: rotatedDir,
        rotation: { maxFiles: 100, maxAgeDays: 30, compressAged: true },
        now: () => NOW,
      });
      expect(swept.deleted).toEqual([]);
      expect(swept.errors).toEqual([]);
      const rotatedNames = [
        ...readdirSync(join(rotatedDir, SESSION_INDEX_DIR)),
        ...readdirSync(join(rotatedDir, TRAJECTORY_DIR)),
      ];
      // Rolled parts, gzipped parts and gzipped past days are all there to be read.
      expect(rotatedNames.filter((name) => /\.jsonl\.\d+\.gz$/.test(name)).length).toBeGreaterThan(20);
      expect(rotatedNames.filter((name) => /^\d{4}-\d{2}-\d{2}\.jsonl\.gz$/.test(name))).toHaveLength(4);
      expect(readdirSync(join(plainDir, TRAJECTORY_DIR))).toHaveLength(12);

      const plain = createObsService({ db, dataDir: plainDir, evidence, now: () => NOW });
      const rotated = createObsService({ db, dataDir: rotatedDir, evidence, now: () => NOW });
      const calls: Array<(service: ObsService) => Promise<unknown>> = [
        (service) => service.fleetHealth({ sinceHours: 24 }),
        (service) => service.fleetHealth({ sinceHours: 120 }),
        (service) => service.traceSearch({ limit: 1000 }),
        (service) => service.explain({ traceId: 'trace-web:chat-3:main-2' }),
        (service) => service.explain({ rootRunId: 'trace-web:chat-4:main-6' }),
      ];
      for (let s = 0; s < 12; s++) {
        calls.push((service) => service.explain({ sessionKey: `web:chat-${s}:main` }));
        calls.push((service) => service.explain({ sessionKey: `web:chat-${s}:main`, depth: 'full' }));
      }
      for (const call of calls) expect(jsonOf(await call(rotated))).toBe(jsonOf(await call(plain)));

      const fleet = await rotated.fleetHealth({ sinceHours: 120 });
      expect(fleet.coverage?.sessionIndex).toEqual({ daysRead: 4, daysMissing: 2 });
      const report = await rotated.explain({ sessionKey: 'web:chat-0:main' });
      expect(report.timing.turnCount).toBe(6);
      const trajectory = await readTrajectory(rotatedDir, 'web:chat-0:main');
      const reference = await readTrajectory(plainDir, 'web:chat-0:main');
      expect(jsonOf(trajectory.records)).toBe(jsonOf(reference.records));
      expect(trajectory.records.length).toBeGreaterThan(30);
    });
  });
});
