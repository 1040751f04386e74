import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SubagentTurnRunner } from '@agentd/autonomy';
import { autonomyDataFixture } from '@agentd/autonomy/testing';
import {
  createOrchestrateService,
  type OrchestrateAutonomy,
  type OrchestrateServiceOptions,
  type RoutedCall,
  type ScriptRequest,
} from '../src/index.js';

/** A sub-agent turn runner whose turns run until their signal aborts (a run stays `running`). */
const heldRunner: SubagentTurnRunner = {
  runTurn: (request) =>
    new Promise((_resolve, reject) => {
      request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    }),
};

/** The tools the test agent holds (the run's capability set). */
export const AGENT_TOOLS = [
  'orchestrate',
  'echo',
  'subagent_spawn',
  'capabilities_introspect',
  'not_for_you',
];

/**
 * A real autonomy service over a real libsql file, a running sub-agent run whose turn the test
 * holds open, a workspace directory, and an orchestrate service over them. The routed tool
 * `echo` answers what it was called with and as whom.
 */
export async function orchestrateFixture(overrides: Partial<OrchestrateServiceOptions> = {}) {
  const fixture = autonomyDataFixture('agentd-orch-data-', () => [...AGENT_TOOLS]);
  const db = await fixture.open();
  const autonomy = await fixture.service(db, { runner: () => heldRunner });
  const workspace = mkdtempSync(join(tmpdir(), 'agentd-orch-ws-'));
  mkdirSync(workspace, { recursive: true });
  const routed: Array<RoutedCall & { sessionKey: string; memoryTenant: string | undefined }> = [];
  const events: Array<{ event: string; payload: Record<string, unknown> }> = [];
  // Every renewal the service asks for, and whether the lease store took it.
  const renewals: Array<{ at: number; ok: boolean }> = [];
  const counted: OrchestrateAutonomy = {
    runOfSession: (sessionKey) => autonomy.runOfSession(sessionKey),
    introspect: (request) => autonomy.introspect(request),
    mintChildLease: (target, request) => autonomy.mintChildLease(target, request),
    trackProcess: (sessionKey, process) => autonomy.trackProcess(sessionKey, process),
    leases: {
      validate: (secret, capability) => autonomy.leases.validate(secret, capability),
      get: (leaseId) => autonomy.leases.get(leaseId),
      renew: async (secret, ttlMs) => {
        try {
          const renewed = await autonomy.leases.renew(secret, ttlMs);
          renewals.push({ at: Date.now(), ok: true });
          return renewed;
        } catch (error) {
          renewals.push({ at: Date.now(), ok: false });
          throw error;
        }
      },
    },
  };
  const service = createOrchestrateService({
    autonomy: counted,
    workspaceOf: async () => workspace,
    invokeTool: async (call) => {
      routed.push(call);
      return { ok: true, value: { echoed: call.args, agentId: call.agentId, runId: call.runId } };
    },
    mayCall: (_agentId, tool) => tool !== 'not_for_you',
    hasTool: (tool) => AGENT_TOOLS.includes(tool),
    events: { emit: (event, payload) => events.push({ event, payload }) },
    ...overrides,
  });
  const spawned = await autonomy.spawn({ parentSessionKey: 'default:rpc:alice', task: 'orchestrate things' });
  return {
    dataDir: fixture.dir,
    db,
    autonomy,
    service,
    workspace,
    routed,
    events,
    renewals,
    run: spawned,
    /** Runs a script as the test agent in the held run's session; a signal that never fires unless given. */
    runScript: (request: Pick<ScriptRequest, 'language' | 'script'> & Partial<ScriptRequest>) =>
      service.run({
        agentId: 'default',
        sessionKey: spawned.sessionKey,
        signal: new AbortController().signal,
        ...request,
      }),
    async cleanup() {
      await fixture.cleanup();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

export { alive, pidsOf } from '@agentd/test-support';
