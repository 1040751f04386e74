import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link WorkspaceError} can carry. `data.field` names the parameter at fault
 * for the codes a caller caused (`INVALID_PATH`, `INVALID_PARAMS`, `UNKNOWN_REVISION`).
 *
 * - `INVALID_OPTIONS`: options given to {@link createWorkspaceService} failed validation.
 * - `INVALID_PARAMS`: a parameter is malformed (an agent id that is no path segment, an empty
 *   commit message, an edit whose text is not found once).
 * - `INVALID_PATH`: a path leaves the workspace (`..`, absolute, a symlink out, a hard link,
 *   a `.git` path) or names the wrong kind of thing (a directory where a file is needed).
 * - `NOT_INITIALIZED`: the workspace has no repository yet and `autoInit` is off.
 * - `FILE_NOT_FOUND`: no file at the path (in the tree, the template set or the commit).
 * - `TOO_LARGE`: written content is over `maxWriteBytes`.
 * - `UNKNOWN_REVISION`: `sha` names no commit of the workspace.
 * - `GIT_FAILED`: git itself failed (`cause` has its error; the message never holds file contents).
 */
export type WorkspaceErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_PARAMS'
  | 'INVALID_PATH'
  | 'NOT_INITIALIZED'
  | 'FILE_NOT_FOUND'
  | 'TOO_LARGE'
  | 'UNKNOWN_REVISION'
  | 'GIT_FAILED';

/** Options accepted by the {@link WorkspaceError} constructor. */
export type WorkspaceErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class WorkspaceError extends AgentdError<WorkspaceErrorCode> {
  override readonly name = 'WorkspaceError';
}

/** True when `error` is a {@link WorkspaceError}, optionally with the given code. */
export const isWorkspaceError = errorGuard(WorkspaceError);

/** A caller-caused refusal naming `field`. */
export function invalid(
  code: 'INVALID_PARAMS' | 'INVALID_PATH' | 'UNKNOWN_REVISION',
  field: string,
  message: string,
): WorkspaceError {
  return new WorkspaceError(code, message, { data: { field } });
}
