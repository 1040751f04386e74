/** The usearch module (native SIMD kernels), loaded when a memory store opens. */
export type Usearch = typeof import('usearch').default;

let loaded: Usearch | undefined;
let loading: Promise<Usearch> | undefined;

/**
 * Loads usearch once. Its native addon costs ~10 MB of memory, so a process that never opens
 * a memory store (a daemon whose memory is off or not used yet) never loads it.
 */
export function loadUsearch(): Promise<Usearch> {
  loading ??= import('usearch').then((module) => {
    loaded = module.default;
    return loaded;
  });
  return loading;
}

/** The loaded module; the vector indexes only exist in a store, which loads it as it opens. */
export function usearch(): Usearch {
  if (loaded === undefined) throw new Error('usearch is used before loadUsearch() resolved');
  return loaded;
}
