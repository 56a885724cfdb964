import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'local-path',
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Waits end when their condition holds; the limits only bound a failing test (test/provisioner/helpers.ts WAIT),
    // on a busy machine where processes start and real control planes answer slowly.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
