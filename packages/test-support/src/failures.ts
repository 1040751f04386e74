/** A class of error a test expects, for {@link thrownBy} and {@link rejectionOf}. */
export type ErrorClass<E> = abstract new (...args: never[]) => E;

function expected<E>(caught: unknown, type: ErrorClass<E> | undefined): E {
  if (type === undefined || caught instanceof type) return caught as E;
  throw new Error(`expected a ${type.name}, got ${String(caught)}`, { cause: caught });
}

/**
 * Calls `run`, which must throw, and answers what it threw (checked to be a `type` when one is
 * given). Throws when `run` returns, so a test cannot pass on a call that did not fail.
 */
export function thrownBy<E = unknown>(run: () => unknown, type?: ErrorClass<E>): E {
  try {
    run();
  } catch (caught) {
    return expected(caught, type);
  }
  throw new Error('expected the call to throw');
}

/**
 * Awaits `promise`, which must reject, and answers the reason (checked to be a `type` when one
 * is given). Rejects when `promise` fulfils.
 */
export async function rejectionOf<E = unknown>(promise: Promise<unknown>, type?: ErrorClass<E>): Promise<E> {
  try {
    await promise;
  } catch (caught) {
    return expected(caught, type);
  }
  throw new Error('expected the call to reject');
}
