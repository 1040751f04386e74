import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link SkillsError} can carry.
 *
 * - `INVALID_OPTIONS`: options or params fail validation.
 * - `INVALID_SKILL`: a `SKILL.md` has no front matter or its front matter fails validation.
 * - `SKILL_NOT_FOUND`: no skill of that name is available (`data.name`).
 * - `REGISTRY_NOT_ALLOWED`: the registry id is not in `skills.import.registries` (nothing was fetched).
 * - `SKILL_BLOCKED`: the skill name is in `skills.import.blocked` (nothing was fetched).
 * - `FETCH_FAILED`: the registry answered an error, too much, or not at all.
 * - `INVALID_ARCHIVE`: the fetched archive is not a gzip tarball holding a skill.
 * - `SCAN_REFUSED`: a scan rule refused a file of the archive (`data.findings`).
 * - `HASH_MISMATCH`: a re-import's archive differs from the pinned hash and `confirm` was not given.
 * - `MISSING_TOOLS`: the skill needs tools the agent may not use (a skill cannot widen them).
 */
export type SkillsErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_SKILL'
  | 'SKILL_NOT_FOUND'
  | 'REGISTRY_NOT_ALLOWED'
  | 'SKILL_BLOCKED'
  | 'FETCH_FAILED'
  | 'INVALID_ARCHIVE'
  | 'SCAN_REFUSED'
  | 'HASH_MISMATCH'
  | 'MISSING_TOOLS';

/** Options accepted by the {@link SkillsError} constructor. */
export type SkillsErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class SkillsError extends AgentdError<SkillsErrorCode> {
  override readonly name = 'SkillsError';
}

/** True when `error` is a {@link SkillsError}, optionally with the given code. */
export const isSkillsError = errorGuard(SkillsError);
