import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'quantity',
    include: ['test/**/*.test.ts'],
  },
});
