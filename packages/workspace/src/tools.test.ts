import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentTool, ToolContext } from './tools.js';
import { createWorkspaceTools } from './tools.js';
import { createWorkspaceService, type WorkspaceService } from './workspace-service.js';

let dataDir: string;
let service: WorkspaceService;
let tools: Map<string, AgentTool>;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'agentd-ws-tools-'));
  service = createWorkspaceService({ dataDir });
  tools = new Map(createWorkspaceTools(service).map((tool) => [tool.name, tool]));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const context: ToolContext = {
  agentId: 'writer',
  sessionKey: 'default:rpc:ada',
  signal: new AbortController().signal,
};

/** Calls a tool the way the tool runner does: params validated by its schema, then the handler. */
async function call(name: string, input: unknown): Promise<unknown> {
  const tool = tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.handler(tool.params.parse(input), context);
}

describe('createWorkspaceTools', () => {
  it('offers the six tools with strict params', () => {
    expect([...tools.keys()]).toEqual([
      'workspace_read',
      'workspace_write',
      'workspace_edit',
      'workspace_list',
      'workspace_grep',
      'workspace_glob',
    ]);
    expect(tools.get('workspace_read')?.params.safeParse({ path: 'a', extra: 1 }).success).toBe(false);
  });

  it('creates the workspace on first use and attributes every write to the agent and session', async () => {
    expect(await call('workspace_list', {})).toMatchObject({ path: '', truncated: false });
    expect((await service.status('writer')).initialized).toBe(true);
    await call('workspace_write', { path: 'plan.md', content: 'step one\nstep two\n' });
    expect(await call('workspace_edit', { path: 'plan.md', oldText: 'step two', newText: 'step 2' })).toEqual(
      {
        path: 'plan.md',
        replacements: 1,
      },
    );
    expect(await call('workspace_read', { path: 'plan.md' })).toMatchObject({
      content: 'step one\nstep 2\n',
    });
    expect(await call('workspace_grep', { pattern: 'step' })).toMatchObject({
      matches: [{ path: 'plan.md', line: 1 }, { line: 2 }],
    });
    expect(await call('workspace_glob', { pattern: '*.md' })).toMatchObject({
      files: expect.arrayContaining(['plan.md']),
    });
    await service.gitCommit('writer', 'plan');
    const message = (await service.gitLog('writer', 1)).commits[0]?.message;
    expect(message).toContain('Workspace-Edit: write plan.md by agent writer (session default:rpc:ada)');
    expect(message).toContain('Workspace-Edit: edit plan.md by agent writer (session default:rpc:ada)');
  });

  it('refuses a path outside the workspace', async () => {
    await expect(call('workspace_read', { path: '../../etc/passwd' })).rejects.toMatchObject({
      code: 'INVALID_PATH',
    });
    await expect(
      call('workspace_write', { path: '.git/hooks/pre-commit', content: 'x' }),
    ).rejects.toMatchObject({
      code: 'INVALID_PATH',
    });
  });
});
