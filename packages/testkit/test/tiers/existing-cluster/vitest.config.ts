/** The suite `existing-cluster.test.ts` runs in a child vitest, against a cluster it started beforehand. */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['*.fixture.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
