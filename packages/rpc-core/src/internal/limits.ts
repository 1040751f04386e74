import { RpcError } from '../errors.js';
import { failure } from './wire.js';

/** The `-32600` answer for a message over the size limit; shared so every transport words it alike. */
export function oversizeFailure(received: number, maximum: number) {
  return failure(
    null,
    RpcError.invalidRequest(`Message too large: received ${received} characters, maximum is ${maximum}`, {
      received,
      maximum,
    }).toJSON(),
  );
}

/** Resolves after `ms` or when `promise` settles, whichever comes first, without leaving a timer behind. */
export async function settleWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, ms));
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
