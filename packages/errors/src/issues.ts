import type { FieldIssue } from '@agentd/contracts';

/** A validation issue as zod (and its like) reports one: where, and what is wrong. */
export interface IssueLike {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * The message of a failed validation: `<prefix><path>: <message>` of its first issue, for
 * example `approvals.defaultMode: Invalid option`; `root` stands for the path of the checked
 * value itself (`createTerminalService: options: ...`), and `invalid` for a missing message.
 */
export function firstIssueText(prefix: string, issues: readonly IssueLike[], root = ''): string {
  const issue = issues[0];
  return `${prefix}${issue?.path.join('.') || root}: ${issue?.message ?? 'invalid'}`;
}

/**
 * The issues as {@link FieldIssue}s (path segments as text, after the segments of `under`): an
 * error's `data.issues`, which rpc-core sends as `-32602` `data.issues`.
 */
export function toFieldIssues(issues: readonly IssueLike[], under: readonly string[] = []): FieldIssue[] {
  return issues.map((issue) => ({ path: [...under, ...issue.path.map(String)], message: issue.message }));
}
