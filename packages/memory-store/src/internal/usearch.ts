/** The usearch module (native SIMD kernels), loaded with the first vector an index holds. */
export type Usearch = typeof import('usearch').default;

let loaded: Usearch | undefined;
let loading: Promise<Usearch> | undefined;

/**
 * Loads usearch once. Its native addon costs several MB of memory, so a process whose memory
 * holds no vectors yet (memory off, or a fresh data directory) never loads it.
 */
export function loadUsearch(): Promise<Usearch> {
  loading ??= import('usearch').then((module) => {
    loaded = module.default;
    return loaded;
  });
  return loading;
}

/** The loaded module; an index calls it only after {@link loadUsearch} resolved (its first add). */
export function usearch(): Usearch {
  if (loaded === undefined) throw new Error('usearch is used before loadUsearch() resolved');
  return loaded;
}
