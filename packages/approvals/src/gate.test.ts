import { openDatabase } from '@agentd/storage';
import { databasePerTest } from '@agentd/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApprovalService, createApprovalService } from './approval-service.js';
import { createApprovalGate } from './gate.js';

const temp = databasePerTest('approval-gate-', (dataDir) => openDatabase({ dataDir }));
let service: ApprovalService;

beforeEach(async () => {
  service = createApprovalService({
    db: temp.db,
    config: { enabled: true, defaultMode: 'require', rules: [{ tool: 'banned', mode: 'deny' }] },
  });
  await service.start();
});

afterEach(() => service.close());

const gateCall = (toolName: string, signal = new AbortController().signal) => ({
  toolName,
  toolCallId: 'call-1',
  input: { path: 'a.txt' },
  params: { path: 'a.txt' },
  agentId: 'main',
  sessionKey: 'main:rpc:u',
  signal,
});

describe('approval gate', () => {
  it('holds the call until it is approved, then lets it through', async () => {
    const gate = createApprovalGate(service);
    expect(gate.name).toBe('approval');
    let settled = false;
    const verdict = gate.before(gateCall('write_file')).finally(() => {
      settled = true;
    });
    for (let i = 0; i < 100 && service.pending().length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
    const [request] = service.pending();
    await service.resolve(request?.id ?? '', true);
    expect(await verdict).toEqual({ allow: true });
  });

  it('tells the model why a call was refused, with errorKind denied', async () => {
    const gate = createApprovalGate(service);
    expect(await gate.before(gateCall('banned'))).toEqual({
      allow: false,
      errorKind: 'denied',
      message: 'Tool banned was not approved: the approval rules deny it',
    });
    const verdict = gate.before(gateCall('write_file'));
    for (let i = 0; i < 100 && service.pending().length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    await service.resolveAll(false, { reason: 'not today' });
    expect(await verdict).toEqual({
      allow: false,
      errorKind: 'denied',
      message: 'Tool write_file was not approved: the approval request was denied (not today)',
    });
    expect(await gate.before(gateCall('write_file'))).toMatchObject({
      message: 'Tool write_file was not approved: it was denied moments ago (not today)',
    });
  });

  it('stops waiting when the turn ends', async () => {
    const gate = createApprovalGate(service);
    const turn = new AbortController();
    const verdict = gate.before(gateCall('write_file', turn.signal));
    turn.abort();
    expect(await verdict).toMatchObject({ allow: false, message: expect.stringContaining('(cancelled)') });
  });
});
