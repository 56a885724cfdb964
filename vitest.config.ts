import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // `repo`: what the repository and its published packages declare and ship (test/).
    projects: ['packages/*', { test: { name: 'repo', include: ['test/**/*.test.ts'] } }],
    globalSetup: ['./vitest.global-setup.ts'],
  },
});
