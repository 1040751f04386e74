import { matchesToolPattern, TOOL_PATTERN, TOOL_PATTERN_RULE } from '@agentd/input-guards';
import { z } from 'zod';

/** What a rule (or the default) does with a tool call: run it, ask a human first, or refuse it. */
export type ApprovalMode = 'auto' | 'require' | 'deny';

/** The three modes, for schemas and docs. */
export const APPROVAL_MODES = ['auto', 'require', 'deny'] as const;

// Tool names and globs: `@agentd/input-guards`' one syntax, as in every tool list of the config.
const toolGlobSchema = z.string().regex(TOOL_PATTERN, TOOL_PATTERN_RULE);

/** One rule: the first whose `tool` glob matches a call's tool name decides its mode. */
export const approvalRuleSchema = z
  .object({
    /** Glob over tool names: `*` any run of characters, `?` one character (`shell_*`, `graph_define`). */
    tool: toolGlobSchema,
    mode: z.enum(APPROVAL_MODES),
  })
  .strict();

/**
 * The `approvals` config section (decisions.md, wave two): off by default; when on, every tool
 * call is matched against `rules` in order (first match wins), calls no rule names get
 * `defaultMode`.
 */
export const approvalsSectionSchema = z
  .object({
    /** Approval gates are off unless this is true. @default false */
    enabled: z.boolean().default(false),
    /**
     * Mode of a tool no rule names. `require` so that turning approvals on without rules asks
     * for every call instead of silently letting everything through. @default 'require'
     */
    defaultMode: z.enum(APPROVAL_MODES).default('require'),
    /** Ordered rules; the first match wins. @default [] */
    rules: z.array(approvalRuleSchema).max(500).default([]),
    /** A request nobody resolves in this time is denied with reason `timeout`. @default 300000 (5 min) */
    timeoutMs: z
      .number()
      .int()
      .min(10)
      .max(7 * 24 * 3_600_000)
      .default(300_000),
    /** A denial answers the same session and tool at once for this long (0 disables). @default 60000 */
    denialCacheMs: z.number().int().min(0).max(86_400_000).default(60_000),
    /** An approval lets the same session and tool through for this long (0 disables). @default 30000 */
    approvalCacheMs: z.number().int().min(0).max(86_400_000).default(30_000),
  })
  .strict();

/** The parsed `approvals` section. */
export type ApprovalsConfig = z.output<typeof approvalsSectionSchema>;
/** The `approvals` section as written in config.yaml. */
export type ApprovalsConfigInput = z.input<typeof approvalsSectionSchema>;
/** One parsed rule. */
export type ApprovalRule = z.output<typeof approvalRuleSchema>;

/** The rules of a config, in order: a tool call costs a few glob matches. */
export interface CompiledRules {
  /** The mode of a tool call, and the index of the rule that decided it (`-1`: the default). */
  modeOf(toolName: string): { mode: ApprovalMode; rule: number };
}

/** The rules of `config` in order, the first whose glob matches deciding. */
export function compileRules(config: Pick<ApprovalsConfig, 'rules' | 'defaultMode'>): CompiledRules {
  const rules = [...config.rules];
  return {
    modeOf(toolName) {
      const index = rules.findIndex((rule) => matchesToolPattern(rule.tool, toolName));
      const rule = rules[index];
      return rule ? { mode: rule.mode, rule: index } : { mode: config.defaultMode, rule: -1 };
    },
  };
}
