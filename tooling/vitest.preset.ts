import { defineProject, type UserWorkspaceConfig } from 'vitest/config';

/**
 * Shared vitest settings for one package. Tests use real sockets, files and
 * processes, so the timeouts are generous and runs stay in forks.
 */
export function preset(name: string, overrides: UserWorkspaceConfig['test'] = {}) {
  return defineProject({
    test: {
      name,
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      environment: 'node',
      pool: 'forks',
      testTimeout: 20_000,
      hookTimeout: 20_000,
      ...overrides,
    },
  });
}
