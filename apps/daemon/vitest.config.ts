import { preset } from '../../tooling/vitest.preset.js';

// Tests that start `agentd` as a process run the built bundle; the global setup rebuilds it
// when a source is newer (test/build-bundle.ts).
export default preset('daemon', { testTimeout: 30_000, globalSetup: ['test/build-bundle.ts'] });
