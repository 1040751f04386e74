/** The outcome of one doctor check. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One row of the doctor's table. */
export interface CheckResult {
  /** What was checked, e.g. `provider openai` or `data dir modes`. */
  name: string;
  status: CheckStatus;
  /** What was found, in one line; never a secret. */
  detail: string;
  /** What to do about a `warn` or `fail`. */
  hint?: string | undefined;
}

/** Builders of the four outcomes, so every check reads the same. */
export const ok = (name: string, detail: string): CheckResult => ({ name, status: 'ok', detail });
export const skip = (name: string, detail: string): CheckResult => ({ name, status: 'skip', detail });
export const warn = (name: string, detail: string, hint: string): CheckResult => ({
  name,
  status: 'warn',
  detail,
  hint,
});
export const fail = (name: string, detail: string, hint: string): CheckResult => ({
  name,
  status: 'fail',
  detail,
  hint,
});

/** A message of an unknown thrown value, on one line. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}

/** Runs `check` within `timeoutMs`; a check that throws or takes longer becomes a `fail`. */
export async function bounded(
  name: string,
  timeoutMs: number,
  hint: string,
  check: (signal: AbortSignal) => Promise<CheckResult>,
): Promise<CheckResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve(fail(name, `no answer within ${timeoutMs} ms`, hint)), timeoutMs);
  });
  try {
    return await Promise.race([check(signal), timedOut]);
  } catch (error) {
    return fail(name, messageOf(error), hint);
  } finally {
    clearTimeout(timer);
  }
}
