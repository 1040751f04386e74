import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*'],
    // One test file per core. Vitest's default leaves a core to itself (one file at a time on a
    // 2-core machine), but these files spend most of their time waiting on sockets, child
    // processes and Chromium: two at a time on 2 cores takes the suite from ~27 to ~16 minutes.
    maxWorkers: availableParallelism(),
  },
});
