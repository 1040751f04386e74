/**
 * One validation problem as an error's `data.issues` lists it: where (path segments from the
 * checked value's root), a stable short code (a zod issue code or the package's own, such as
 * `cycle`), and what is wrong. rpc-core sends these to clients as `-32602` `data.issues`.
 */
export interface ValidationIssue {
  /** Where the problem is, for example `['nodes', 2, 'dependsOn', 0]`. */
  path: Array<string | number>;
  /** A stable short code. */
  code: string;
  /** What is wrong. */
  message: string;
}

/** One field problem, in the shape rpc-core turns into `-32602` `data.issues`: a field path and no code. */
export interface FieldIssue {
  /** Path of the field, e.g. `['schedule', 'expr']`. */
  path: string[];
  /** What is wrong with it. */
  message: string;
}

/**
 * The `data` of an error whose validation codes list {@link FieldIssue}s under `issues`; any other
 * structured detail beside them.
 */
export type FieldIssuesData = { issues?: FieldIssue[] } & Record<string, unknown>;
