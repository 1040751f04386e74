import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// The daemon bundles the workspace packages (their exports point at src) and keeps npm deps external.
export default defineConfig(
  preset({ entry: ['src/index.ts', 'src/cli.ts'], noExternal: [/^@agentd\//], dts: false }),
);
