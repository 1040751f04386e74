import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*'],
    // Two test files at a time whatever the core count (vitest's default on a 2-core machine is
    // one): most files wait on real processes, sockets and timers rather than on the CPU.
    maxWorkers: 2,
  },
});
