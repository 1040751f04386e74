import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// The daemon bundles the workspace packages (their exports point at src) and keeps every npm
// dependency external: bundled, CommonJS dependencies break in ESM ("Dynamic require of os").
// Each such dependency is therefore listed in this package's dependencies too.
export default defineConfig(
  preset({
    entry: ['src/index.ts', 'src/cli.ts'],
    noExternal: [/^@agentd\//],
    external: [/^(?!@agentd\/)[^./]/],
    dts: false,
    // `agentd call` and `token create` load only the CLI and the client; the daemon is a chunk
    // that `start` imports.
    splitting: true,
  }),
);
