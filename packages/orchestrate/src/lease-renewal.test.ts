import { afterEach, describe, expect, it } from 'vitest';
import { orchestrateFixture } from '../test/helpers.js';

let fixture: Awaited<ReturnType<typeof orchestrateFixture>> | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

/** Calls `echo` every 150 ms for `ms`; prints how many calls worked, and how many and why refused. */
const pacedScript = (ms: number) => `
  import { invoke } from '/agentd/orch.mjs';
  const until = Date.now() + ${ms};
  let ok = 0;
  let refused = null;
  let refusals = 0;
  while (Date.now() < until) {
    try {
      await invoke('echo', { n: ok });
      ok += 1;
    } catch (error) {
      refused ??= { code: error.code, reason: error.data?.reason };
      refusals += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  const after = await invoke('ls', { path: '.' }).then(() => 'allowed', (error) => error.data?.reason ?? error.message);
  console.log(JSON.stringify({ ok, refused, refusals, after }));
`;

describe('orchestrate: the child lease is renewed while the script runs', () => {
  it('keeps a lease shorter than the run alive: every call of a 2.6 s run works under a 1 s lease', async () => {
    fixture = await orchestrateFixture({ orchestrate: { leaseTtlMs: 1000, timeoutMs: 10_000 } });
    const result = await fixture.runScript({
      language: 'js',
      script: pacedScript(2600),
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.refused).toBeNull();
    expect(out.after).toBe('allowed');
    expect(out.ok).toBeGreaterThanOrEqual(8);
    // Renewed about every 500 ms while the run lasted; each one taken by the lease store.
    expect(fixture.renewals.length).toBeGreaterThanOrEqual(3);
    expect(fixture.renewals.every((renewal) => renewal.ok)).toBe(true);
    const lease = await fixture.autonomy.leases.get(result.leaseId as string);
    expect((lease?.expiresAt ?? 0) - (lease?.createdAt ?? 0)).toBeGreaterThan(2000);
    // Renewal ends with the run: the lease now lapses on its own.
    const renewed = fixture.renewals.length;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(fixture.renewals.length).toBe(renewed);
    expect((await fixture.autonomy.leases.get(result.leaseId as string))?.expiresAt).toBe(lease?.expiresAt);
  });

  it('stops renewing a revoked lease, and the socket refuses every further call', async () => {
    fixture = await orchestrateFixture({ orchestrate: { leaseTtlMs: 1000, timeoutMs: 10_000 } });
    const running = fixture.runScript({
      language: 'js',
      // Runs on well past the revocation, so renewal ticks come after it.
      script: pacedScript(2500),
    });
    const current = fixture;
    // Wait for a renewal and a call, then revoke the child lease mid-run.
    for (let i = 0; i < 100 && (current.renewals.length < 1 || current.routed.length < 4); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const leaseId = current.routed[0]?.leaseId as string;
    expect(await current.autonomy.revoke({ leaseId })).toEqual({ revoked: 1 });
    const result = await running;
    expect(result.exitCode).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.ok).toBeGreaterThanOrEqual(4);
    expect(out.refused).toEqual({ code: -32001, reason: 'revoked' });
    expect(out.after).toBe('revoked');
    expect(out.refusals).toBeGreaterThanOrEqual(3);
    // One renewal attempt after the revocation (refused), then none for the rest of the run.
    const failed = current.renewals.filter((renewal) => !renewal.ok);
    expect(failed).toHaveLength(1);
    expect(current.renewals.at(-1)?.ok).toBe(false);
    const lease = await current.autonomy.leases.get(leaseId);
    expect(lease?.revokedAt).toBeDefined();
    expect(result.toolCalls).toEqual(
      expect.arrayContaining([expect.objectContaining({ tool: 'echo', decision: 'lease_invalid' })]),
    );
  });
});
