import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// `testing` holds the data-dir fixture for the tests of this package and of its users (orchestrate).
export default defineConfig(preset({ entry: ['src/index.ts', 'src/testing.ts'] }));
