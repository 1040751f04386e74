import { describe, expect, it } from 'vitest';
import { approvalsSectionSchema, compileRules } from './config.js';

describe('approvals config', () => {
  it('is off by default, with the documented defaults', () => {
    expect(approvalsSectionSchema.parse({})).toEqual({
      enabled: false,
      defaultMode: 'require',
      rules: [],
      timeoutMs: 300_000,
      denialCacheMs: 60_000,
      approvalCacheMs: 30_000,
    });
  });

  it('refuses unknown keys, modes and globs outside the tool-name alphabet', () => {
    expect(approvalsSectionSchema.safeParse({ enable: true }).success).toBe(false);
    expect(approvalsSectionSchema.safeParse({ rules: [{ tool: 'x', mode: 'ask' }] }).success).toBe(false);
    expect(approvalsSectionSchema.safeParse({ rules: [{ tool: 'a b', mode: 'deny' }] }).success).toBe(false);
    expect(approvalsSectionSchema.safeParse({ rules: [{ tool: '(.*)+', mode: 'deny' }] }).success).toBe(
      false,
    );
    expect(approvalsSectionSchema.safeParse({ timeoutMs: 0 }).success).toBe(false);
  });

  it('matches globs over whole tool names: * any run, ? one character, . literal', () => {
    const matches = (tool: string, name: string) =>
      compileRules(
        approvalsSectionSchema.parse({ defaultMode: 'auto', rules: [{ tool, mode: 'deny' }] }),
      ).modeOf(name).rule === 0;
    expect(matches('graph_*', 'graph_define')).toBe(true);
    expect(matches('graph_*', 'xgraph_define')).toBe(false);
    expect(matches('mem?ry_search', 'memory_search')).toBe(true);
    expect(matches('a.b', 'a.b')).toBe(true);
    expect(matches('a.b', 'axb')).toBe(false);
    expect(matches('*', 'anything')).toBe(true);
  });

  it('takes the first matching rule, else the default mode', () => {
    const rules = compileRules(
      approvalsSectionSchema.parse({
        defaultMode: 'auto',
        rules: [
          { tool: 'graph_list', mode: 'auto' },
          { tool: 'graph_*', mode: 'require' },
          { tool: '*', mode: 'deny' },
        ],
      }),
    );
    expect(rules.modeOf('graph_list')).toEqual({ mode: 'auto', rule: 0 });
    expect(rules.modeOf('graph_define')).toEqual({ mode: 'require', rule: 1 });
    expect(rules.modeOf('memory_store')).toEqual({ mode: 'deny', rule: 2 });
    const none = compileRules(approvalsSectionSchema.parse({ defaultMode: 'auto' }));
    expect(none.modeOf('memory_store')).toEqual({ mode: 'auto', rule: -1 });
  });
});
