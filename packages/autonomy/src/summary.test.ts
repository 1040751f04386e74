import { afterEach, describe, expect, it } from 'vitest';
import { autonomyFixture, scriptedRunner } from '../test/helpers.js';
import { autonomyMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { summarizeAutonomy } from './summary.js';

let fixture: ReturnType<typeof autonomyFixture>;
afterEach(() => fixture.cleanup());

describe('summarizeAutonomy', () => {
  it('is absent without the run table and counts runs, signals and the worst root with it', async () => {
    fixture = autonomyFixture();
    const db = await fixture.open();
    expect(await summarizeAutonomy(db, { sinceMs: 0 })).toBeUndefined();
    await db.migrate(MIGRATION_PACKAGE, autonomyMigrationSet);
    expect(await summarizeAutonomy(db, { sinceMs: 0 })).toEqual({
      runs: { total: 0, degraded: 0, degradedRate: 0 },
      orphaned: 0,
      resumed: 0,
      revoked: 0,
      killed: 0,
      denialBreakerTrips: 0,
      budgetBreaches: 0,
      costUsd: 0,
    });

    const runner = scriptedRunner();
    const service = await fixture.service(db, {
      runner: () => runner,
      costOf: async () => 0.5,
      autonomy: { denialBreakerThreshold: 1 },
    });
    const killed = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
    const revoked = await service.spawn({ parentSessionKey: 'p:rpc:2', task: 't' });
    const tripped = await service.spawn({ parentSessionKey: 'p:rpc:3', task: 't' });
    const done = await service.spawn({ parentSessionKey: 'p:rpc:4', task: 't' });
    await service.kill(killed.runId);
    await service.revoke({ rootRunId: revoked.runId });
    await service
      .gate()
      .after({ sessionKey: tripped.sessionKey, toolName: 'x' }, { ran: false, errorKind: 'denied' });
    (await runner.turnOf(done.sessionKey)).finish('ok');
    await service.wait([done.runId], { timeoutMs: 5000 });

    const summary = await summarizeAutonomy(db, { sinceMs: 0 });
    expect(summary).toEqual({
      runs: { total: 4, degraded: 1, degradedRate: 0.25 },
      orphaned: 0,
      resumed: 0,
      revoked: 1,
      killed: 1,
      denialBreakerTrips: 1,
      budgetBreaches: 0,
      costUsd: 0.5,
      // No orphaned run: the denial breaker is the most severe.
      worstRootRunId: tripped.runId,
    });
    expect((await summarizeAutonomy(db, { sinceMs: Date.now() + 60_000 }))?.runs.total).toBe(0);
  });
});
