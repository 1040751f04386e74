import type { Options } from 'tsup';

/** Shared tsup settings: ESM + .d.ts for Node 20, one entry per package. */
export function preset(overrides: Options = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    treeshake: true,
    ...overrides,
  };
}
