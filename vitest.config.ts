import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/** `repo`: what the repository and its published packages declare and ship (test/). */
export const repo = {
  test: {
    name: 'repo',
    include: ['test/**/*.test.ts'],
    // Most of these tests run programs (node, tsc, pnpm pack, tar), which a busy machine starts slowly: vitest's
    // 5 s is far too short for them.
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
} satisfies TestProjectInlineConfiguration;

export default defineConfig({
  test: {
    projects: ['packages/*', repo],
    globalSetup: ['./vitest.global-setup.ts'],
  },
});
