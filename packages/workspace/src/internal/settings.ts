import { firstIssueText } from '@agentd/errors';
import type { Logger } from '@agentd/contracts';
import { WorkspaceError } from '../errors.js';
import { type WorkspaceSection, type WorkspaceServiceOptions, workspaceSectionSchema } from '../options.js';

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/** Splits and validates service options: the config section, the data dir and the injected parts. */
export function parseServiceOptions(options: WorkspaceServiceOptions): {
  section: WorkspaceSection;
  dataDir: string;
  logger: Logger;
  now: () => number;
} {
  const { dataDir, logger, now, ...rest } = options ?? ({} as WorkspaceServiceOptions);
  if (typeof dataDir !== 'string' || dataDir === '') {
    throw new WorkspaceError('INVALID_OPTIONS', 'createWorkspaceService: dataDir must be a non-empty string');
  }
  const parsed = workspaceSectionSchema.safeParse(rest);
  if (!parsed.success) {
    throw new WorkspaceError(
      'INVALID_OPTIONS',
      firstIssueText('createWorkspaceService: ', parsed.error.issues, 'options'),
      {
        data: { issues: parsed.error.issues },
      },
    );
  }
  return { section: parsed.data, dataDir, logger: logger ?? noopLogger, now: now ?? Date.now };
}
