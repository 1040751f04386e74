import type { Document } from 'yaml';
import { z } from 'zod';
import type { ConfigStoreLogger, ConfigWriteResult } from '../config-store.js';
import { type ConfigIssue, ConfigStoreError } from '../errors.js';
import type { ConfigGit } from './git.js';
import { changedPaths } from './values.js';

/** Convert zod issues to the package's issue shape. */
export function toIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.map((issue) => {
    const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `${message}: ${issue.keys.join(', ')}`;
    return { path, pathText: path.join('.'), message, code: issue.code };
  });
}

/** The issues as one line, for error messages. */
export function describeIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((issue) => `${issue.pathText || '<root>'}: ${issue.message}`).join('; ');
}

/** The config file as last read or written. */
export interface Snapshot {
  /** Exact bytes of the file. */
  text: string;
  /** YAML document, kept so later writes preserve comments. */
  document: Document;
  /** Plain value of the file (what a person wrote, defaults not applied). */
  raw: Record<string, unknown>;
  /** Validated config with defaults applied. */
  config: Record<string, unknown>;
}

/** A committed change, before listeners are told. */
export interface Outcome {
  result: ConfigWriteResult;
  next: Record<string, unknown>;
  hot: boolean;
}

/** The settings the store's parts read. */
export interface ConfigSettings {
  fileName: string;
  author: { name: string; email: string };
  header: string;
  now: () => number;
}

/**
 * What the store's parts share: the compiled section schemas, the file and
 * its directory, the injected logger and clock, and (once loaded) the history
 * repository and the current snapshot.
 */
export interface ConfigContext {
  readonly settings: ConfigSettings;
  readonly sectionNames: string[];
  /** Each section's schema, defaults prefaulted. */
  readonly shape: Record<string, z.ZodType>;
  readonly fullSchema: z.ZodType;
  /** Restart-required dot paths (or `*`) per section. */
  readonly restartPatterns: Map<string, readonly string[]>;
  readonly dataDir: string;
  readonly filePath: string;
  readonly logger: ConfigStoreLogger;
  git: ConfigGit | undefined;
  snapshot: Snapshot | undefined;
}

/**
 * Compiles the section definitions into one strict schema; throws
 * `INVALID_OPTIONS` when a section schema does not accept `{}`.
 */
export function compileSections(
  sections: Record<string, { schema: z.ZodType; restartRequired?: string[] | undefined }>,
): Pick<ConfigContext, 'sectionNames' | 'shape' | 'fullSchema' | 'restartPatterns'> {
  const sectionNames = Object.keys(sections);
  const shape: Record<string, z.ZodType> = {};
  for (const name of sectionNames) {
    // prefault (not default) so `{}` goes through the section schema and
    // picks up every nested default.
    const sectionSchema = sections[name]!.schema.prefault({} as never);
    const check = sectionSchema.safeParse(undefined);
    if (!check.success) {
      const issues = toIssues(check.error.issues);
      throw new ConfigStoreError(
        'INVALID_OPTIONS',
        `Section "${name}" must accept {} to provide defaults: ${describeIssues(issues)}`,
        { data: { section: name, issues } },
      );
    }
    shape[name] = sectionSchema;
  }
  const fullSchema = z.strictObject(shape);
  const restartPatterns = new Map(
    sectionNames.map((name) => [name, sections[name]!.restartRequired ?? []] as const),
  );

  return { sectionNames, shape, fullSchema, restartPatterns };
}

/** The config with defaults applied; throws `VALIDATION` naming each issue. */
export function validate(ctx: ConfigContext, raw: unknown): Record<string, unknown> {
  const result = ctx.fullSchema.safeParse(raw);
  if (result.success) return result.data as Record<string, unknown>;
  const issues = toIssues(result.error.issues);
  throw new ConfigStoreError('VALIDATION', `Invalid config: ${describeIssues(issues)}`, {
    data: { issues },
  });
}

/** Section-relative restart paths among the changes, and whether any change is hot. */
export function classify(
  ctx: ConfigContext,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { changedSections: string[]; restartRequired: string[]; hot: boolean } {
  const changedSections: string[] = [];
  const restart = new Set<string>();
  let hot = false;
  for (const name of ctx.sectionNames) {
    const paths = changedPaths(before[name], after[name]);
    if (paths.length === 0) continue;
    changedSections.push(name);
    const patterns = ctx.restartPatterns.get(name) ?? [];
    for (const path of paths) {
      let needsRestart = false;
      for (const pattern of patterns) {
        if (pattern === '*') {
          restart.add(name);
          needsRestart = true;
          continue;
        }
        const patternPath = pattern.split('.');
        const overlap = patternPath.length <= path.length ? patternPath : path;
        const longer = patternPath.length <= path.length ? path : patternPath;
        if (overlap.every((segment, index) => longer[index] === segment)) {
          restart.add(`${name}.${pattern}`);
          needsRestart = true;
        }
      }
      if (!needsRestart) hot = true;
    }
  }
  return { changedSections, restartRequired: [...restart], hot };
}

/** The repository and snapshot; throws `NOT_LOADED` before `load()` finished. */
export function loaded(ctx: ConfigContext): { git: ConfigGit; state: Snapshot } {
  if (!ctx.git || !ctx.snapshot)
    throw new ConfigStoreError('NOT_LOADED', 'Config store used before load() finished');
  return { git: ctx.git, state: ctx.snapshot };
}

/** Throws `SECTION_NOT_FOUND` unless `section` is one of the store's. */
export function requireSection(ctx: ConfigContext, section: string): void {
  if (!Object.hasOwn(ctx.shape, section)) {
    throw new ConfigStoreError('SECTION_NOT_FOUND', `Config section not found: ${section}`, {
      data: { section, sections: ctx.sectionNames },
    });
  }
}

const commitReferencePattern = /^(?:[0-9a-fA-F]{4,64}|HEAD(?:~\d{1,6}|\^{1,6})?)$/;

/** The full sha of a commit reference (hex prefix or HEAD~n); throws `NOT_FOUND`. */
export async function requireCommit(repository: ConfigGit, reference: string): Promise<string> {
  const sha = commitReferencePattern.test(reference) ? await repository.resolveCommit(reference) : undefined;
  if (!sha)
    throw new ConfigStoreError('NOT_FOUND', `Commit not found: ${reference}`, { data: { sha: reference } });
  return sha;
}
