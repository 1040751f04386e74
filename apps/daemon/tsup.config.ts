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
    // Comments and indentation out of the shipped JavaScript: V8 keeps every module's source text
    // in the heap for the process's life, and the daemon's chunk went from 2.2 MB (a UTF-16
    // string, for a few non-ASCII characters) to 0.8 MB of one-byte text; keep the sources ASCII
    // (write `\u2019`, not the character, in a regular expression). Identifiers stay, so stack
    // traces still name functions; the source maps map them back to the TypeScript.
    minifyWhitespace: true,
  }),
);
