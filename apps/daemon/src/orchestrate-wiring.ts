import type { AgentRuntime } from '@agentd/agent-runtime';
import type { AutonomyService } from '@agentd/autonomy';
import type { EventSink, Logger } from '@agentd/contracts';
import type { MediaService } from '@agentd/media';
import { createOrchestrateService, type OrchestrateService } from '@agentd/orchestrate';
import type { WorkspaceService } from '@agentd/workspace';
import type { DaemonConfig } from './config-schema.js';

/** The orchestrate service and the switch of its tool (`orchestrate.enabled`, applied live). */
export interface OrchestrateWiring {
  service: OrchestrateService;
  applyConfig(section: DaemonConfig['orchestrate']): void;
}

/**
 * Creates the orchestrate service over the running parts: autonomy's leases and process
 * tracking, the agent's workspace, the runtime's tool runner for routed calls (so a script's
 * call takes the same gate chain as a model's, in the same memory tenant) and media's guarded link reader for
 * `web_fetch`; registers the `orchestrate` tool while the section enables it.
 */
export function wireOrchestrate(parts: {
  section: DaemonConfig['orchestrate'];
  agentRuntime: AgentRuntime;
  autonomy: AutonomyService;
  workspace: WorkspaceService;
  media: MediaService;
  events: EventSink;
  logger: Logger;
  now: () => number;
}): OrchestrateWiring {
  const { agentRuntime, media } = parts;
  const service = createOrchestrateService({
    autonomy: parts.autonomy,
    workspaceOf: (agentId) => parts.workspace.ensure(agentId),
    invokeTool: (call) =>
      agentRuntime.invokeTool({
        agentId: call.agentId,
        sessionKey: call.sessionKey,
        traceId: call.traceId,
        memoryTenant: call.memoryTenant,
        toolName: call.tool,
        input: call.args,
        signal: call.signal,
      }),
    mayCall: (agentId, tool) => agentRuntime.toolsDenied(agentId, [tool]).length === 0,
    hasTool: (tool) => agentRuntime.toolNames().includes(tool),
    webFetch: async (url, signal) => {
      const read = await media.processLinks({ text: url }, { signal });
      return read.links[0] ?? { ok: false, error: 'no http(s) URL found' };
    },
    orchestrate: parts.section,
    events: parts.events,
    logger: parts.logger,
    now: parts.now,
  });
  let registered = false;
  const applyConfig = (section: DaemonConfig['orchestrate']) => {
    service.applyConfig(section);
    if (section.enabled && !registered) agentRuntime.registerTools([service.tool()]);
    if (!section.enabled && registered) agentRuntime.unregisterTools(['orchestrate']);
    registered = section.enabled;
  };
  applyConfig(parts.section);
  return { service, applyConfig };
}
