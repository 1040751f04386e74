/** The part of a tool call the manifest gate reads (structurally the agent runtime's `ToolGateCall`). */
export interface ManifestGateCall {
  readonly toolName: string;
  readonly traceId: string;
}

/** The gate's verdict (structurally the agent runtime's `ToolGateVerdict`). */
export type ManifestGateVerdict = { allow: true } | { allow: false; errorKind: string; message: string };

/** A tool gate for the agent runtime's chain (structurally its `ToolGate`). */
export interface ManifestGate {
  readonly name: string;
  before(call: ManifestGateCall): ManifestGateVerdict;
}

/** Turns remembered at most; the oldest are forgotten first (a turn lasts minutes, not hours). */
const MAX_TURNS = 2000;

/**
 * The permission manifests of imported skills, per turn: once a turn has loaded an imported
 * skill with `skill_read`, its tool calls are limited to the tools the loaded skills declare
 * (and `skill_read`). The runtime's own allow-list gate runs before this one, so a manifest
 * only ever narrows an agent's tools, never widens them.
 */
export class ManifestLedger {
  readonly #turns = new Map<string, { names: Set<string>; tools: Set<string> }>();

  /** Records that the turn `traceId` loaded skill `name` needing `tools`. */
  load(traceId: string, name: string, tools: readonly string[]): void {
    let turn = this.#turns.get(traceId);
    if (!turn) {
      if (this.#turns.size >= MAX_TURNS) {
        const oldest = this.#turns.keys().next().value;
        if (oldest !== undefined) this.#turns.delete(oldest);
      }
      turn = { names: new Set(), tools: new Set() };
      this.#turns.set(traceId, turn);
    }
    turn.names.add(name);
    for (const tool of tools) turn.tools.add(tool);
  }

  /** The gate enforcing the recorded manifests. */
  gate(readTool: string): ManifestGate {
    return {
      name: 'skill-manifest',
      before: (call) => {
        const turn = this.#turns.get(call.traceId);
        if (!turn || call.toolName === readTool || turn.tools.has(call.toolName)) return { allow: true };
        return {
          allow: false,
          errorKind: 'denied',
          message: `${call.toolName} is outside the permission manifest of the imported skill(s) loaded in this turn (${[...turn.names].join(', ')})`,
        };
      },
    };
  }
}
