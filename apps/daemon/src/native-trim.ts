import { createRequire } from 'node:module';

/**
 * Hands the C heap's free pages back to the system: glibc's `malloc_trim(0)`.
 *
 * What a load leaves in a daemon's resident memory once V8's heap is collected is native: glibc
 * keeps freed allocations (socket read buffers, V8's compiler zones, libsql's statements) in its
 * arena, and returns pages to the system only from the arena's top, which a few live blocks pin.
 * Measured on the daemon after three bursts of 200 sockets and a full collection: the arena held
 * 22 MB for 6 MB before the load, and `malloc_trim(0)`, which releases every free page wherever
 * it lies, brought RSS from 115 to 98 MB in 0.1 ms. Node offers no call for it, so the function
 * is reached through koffi (a foreign-function interface whose npm package carries prebuilt
 * binaries, so nothing is compiled at install).
 *
 * Measured again with and without it (`agentd start`, embedded defaults): a fresh daemon settled
 * at 87-91 MB with the trim and 89-96 MB without (four runs each); 60 s after three bursts of
 * 200 sockets (`bench/run.ts --part load --load bursts`) it held 114 and 107 MB with the trim,
 * 128 and 130 MB without; the growth over the settled RSS before the load (second runs) was 7 MB
 * with it and 27 MB without, where the benchmark aims below 15 MB. So it stays.
 *
 * Answers `undefined` where there is nothing to call: not Linux, no glibc (musl, whose allocator
 * returns memory on its own), or koffi unable to load; the daemon then runs as before.
 */
export function loadNativeTrim(): (() => void) | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as KoffiModule;
    const trim = koffi.load('libc.so.6').func('int malloc_trim(size_t)');
    return () => {
      trim(0);
    };
  } catch {
    return undefined;
  }
}

/** The part of koffi's API used here. */
interface KoffiModule {
  load(path: string): { func(signature: string): (pad: number) => number };
}
