import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'hostpath-example',
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
