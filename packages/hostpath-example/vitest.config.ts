import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'hostpath-example',
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Waits end when their condition holds (WAIT of @kprov/testkit/vitest, 60 s); the limits only bound a failing test,
    // on a busy machine where processes start and real control planes answer slowly.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
