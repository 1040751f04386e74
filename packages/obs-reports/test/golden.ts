import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { expect } from 'vitest';

/** Where a golden may be (re)written from: a developer's run, never CI. */
export interface GoldenEnvironment {
  /** `'1'` rewrites every golden after an intended change; review the diff before committing. */
  UPDATE_GOLDEN?: string | undefined;
  /** Set (to anything but `'false'`/`'0'`) by CI runners: a missing golden is then a failure. */
  CI?: string | undefined;
}

function inCi(environment: GoldenEnvironment): boolean {
  const value = environment.CI;
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * Compares `value` with the JSON golden at `path`. Outside CI a missing golden is written (the
 * first run of a new case records it for review); in CI it fails, since a test that writes its own
 * expectation there would pass whatever the code produced.
 */
export function matchGolden(
  path: string,
  value: unknown,
  environment: GoldenEnvironment = process.env,
): void {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  const update = environment.UPDATE_GOLDEN === '1';
  if (!existsSync(path)) {
    if (inCi(environment) && !update) {
      throw new Error(
        `golden file ${path} is missing: run the test locally (or with UPDATE_GOLDEN=1) and commit it`,
      );
    }
    writeFileSync(path, text);
  } else if (update) {
    writeFileSync(path, text);
  }
  // Parsed comparison: the files are formatted by the linter; byte stability is tested separately.
  expect(JSON.parse(text)).toEqual(JSON.parse(readFileSync(path, 'utf8')));
}
