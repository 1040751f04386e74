import { type MethodContext, ErrorCodes, RpcError } from '@agentd/rpc-core';
import { isWorkspaceError, type WorkspaceActor, type WorkspaceService } from '@agentd/workspace';
import { z } from 'zod';
import { methodsOf } from './define.js';

// What the caller sent wrong is -32602 naming the field; a workspace or file that is not
// there is -32004; git's own failures are -32603 with a message that never holds file content.
const paramsCodes = new Set(['INVALID_PARAMS', 'INVALID_PATH', 'UNKNOWN_REVISION', 'TOO_LARGE']);

function toRpcError(error: unknown): unknown {
  if (!isWorkspaceError(error)) return error;
  if (paramsCodes.has(error.code)) {
    const field = String(error.data?.field ?? 'params');
    return new RpcError(ErrorCodes.InvalidParams, `Invalid params: ${error.message}`, {
      data: { issues: [{ path: [field], code: 'custom', message: error.message }], code: error.code },
    });
  }
  if (error.code === 'NOT_INITIALIZED')
    return RpcError.notFound('workspace', String(error.data?.agentId ?? ''));
  if (error.code === 'FILE_NOT_FOUND') return RpcError.notFound('file', String(error.data?.path ?? ''));
  return new RpcError(ErrorCodes.InternalError, error.message, { data: { code: error.code }, cause: error });
}

const agentId = z
  .string()
  .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/, 'an agent id: letters, digits, dot, underscore, dash')
  .default('default');
const path = z.string().min(1).max(4096);
const sha = z.string().min(1).max(64).optional();

/** The params schemas, as decisions.md pins them. */
const params = {
  agent: z.object({ agentId }).strict(),
  file: z.object({ agentId, path }).strict(),
  write: z.object({ agentId, path, content: z.string() }).strict(),
  optionalPath: z.object({ agentId, path: path.optional() }).strict(),
  restore: z.object({ agentId, path, sha }).strict(),
  log: z.object({ agentId, limit: z.number().int().min(1).max(1000).optional() }).strict(),
  commit: z.object({ agentId, message: z.string().min(1).max(100_000) }).strict(),
};

/** workspace.*: each agent's git-versioned directory. Reads need `rpc`, changes `admin`. */
export function workspaceMethods(deps: {
  workspace: WorkspaceService;
  agentExists: (agentId: string) => boolean;
}) {
  const { workspace } = deps;
  const { rpcMethod, adminMethod } = methodsOf('workspace', toRpcError);
  const known = (id: string): string => {
    if (!deps.agentExists(id)) throw RpcError.notFound('agent', id);
    return id;
  };
  const operator = (context: MethodContext): WorkspaceActor => ({
    kind: 'operator',
    caller: context.identity.tokenId,
  });
  return [
    rpcMethod('status', {
      description:
        'Whether the agent workspace exists, its branch and HEAD, changed paths and edits awaiting a commit.',
      params: params.agent,
      handler: (p) => workspace.status(known(p.agentId)),
    }),
    rpcMethod('readFile', {
      description:
        'A file of the workspace: {path, content, truncated, binary, size}; binary files are not returned.',
      params: params.file,
      handler: (p) => workspace.readFile(known(p.agentId), p.path),
    }),
    rpcMethod('listDir', {
      description: 'Entries of a workspace directory (default the root): name, type, size.',
      params: params.optionalPath,
      handler: (p) => workspace.listDir(known(p.agentId), p.path ?? ''),
    }),
    rpcMethod('git.status', {
      description: 'Branch, HEAD and changed paths of the workspace repository.',
      params: params.agent,
      handler: (p) => workspace.gitStatus(known(p.agentId)),
    }),
    rpcMethod('git.log', {
      description: 'Commits of the workspace, newest first (default 20).',
      params: params.log,
      handler: (p) => workspace.gitLog(known(p.agentId), p.limit),
    }),
    rpcMethod('git.diff', {
      description:
        'The working tree against HEAD (optionally one path), capped with truncated, and the untracked paths.',
      params: params.optionalPath,
      handler: (p) => workspace.gitDiff(known(p.agentId), p.path ?? ''),
    }),
    adminMethod('writeFile', {
      description: 'Create or overwrite a workspace file; recorded for the next commit.',
      params: params.write,
      handler: (p, context) => workspace.writeFile(known(p.agentId), p.path, p.content, operator(context)),
    }),
    adminMethod('deleteFile', {
      description: 'Delete a workspace file; recorded for the next commit.',
      params: params.file,
      handler: (p, context) => workspace.deleteFile(known(p.agentId), p.path, operator(context)),
    }),
    adminMethod('resetFile', {
      description: 'Restore a file from commit sha, else from the workspace template, else from HEAD.',
      params: params.restore,
      handler: (p, context) => workspace.resetFile(known(p.agentId), p.path, p.sha, operator(context)),
    }),
    adminMethod('init', {
      description: 'Create the workspace: a repository whose first commit holds the template files.',
      params: params.agent,
      handler: (p) => workspace.init(known(p.agentId)),
    }),
    adminMethod('git.commit', {
      description:
        'Commit every change, each recorded edit attributed in a trailer; committed false when nothing changed.',
      params: params.commit,
      handler: (p, context) => workspace.gitCommit(known(p.agentId), p.message, operator(context)),
    }),
    adminMethod('git.restore', {
      description: 'Put a path (file or directory) back as it is in commit sha (default HEAD).',
      params: params.restore,
      handler: (p, context) => workspace.gitRestore(known(p.agentId), p.path, p.sha, operator(context)),
    }),
  ];
}
