import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// `testing` is the `@agentd/storage/testing` entry (the PostgreSQL test-server helpers).
export default defineConfig(preset({ entry: ['src/index.ts', 'src/testing.ts'] }));
