import { preset } from '../../tooling/vitest.preset.js';

// The browser tests build the console once (globalSetup), then drive Chromium against a real
// daemon; a page load on a loaded 2-core machine is slow, so the timeouts are generous.
export default preset('console', {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'build/**/*.test.ts'],
  globalSetup: ['test/build-once.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
});
