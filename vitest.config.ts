import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // `repo`: what the repository and its published packages declare and ship (test/).
    projects: [
      'packages/*',
      {
        test: {
          name: 'repo',
          include: ['test/**/*.test.ts'],
          // Most of these tests run programs (node, tsc, pnpm pack, tar), which a busy machine starts slowly: vitest's
          // 5 s is far too short for them.
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
    globalSetup: ['./vitest.global-setup.ts'],
  },
});
