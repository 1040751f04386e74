import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// `testing` holds sample evidence for the tests of packages that read evidence files.
export default defineConfig(preset({ entry: ['src/index.ts', 'src/testing.ts'] }));
