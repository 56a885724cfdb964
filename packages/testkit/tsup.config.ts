import { defineConfig } from 'tsup';
import { asciiOutput } from '../../tsup.ascii.js';
import { GATES_DIR, nodeVersionGates } from '../../tsup.binary.js';

export default defineConfig([
  {
    entry: ['src/index.ts', 'src/cli.ts', 'src/vitest.ts'],
    format: ['esm'],
    dts: true,
    sourcemap: true,
    // Everything but the binary's Node.js check, which the other build writes at the same time.
    clean: [`!${GATES_DIR}/**`],
    target: 'node22',
    platform: 'node',
    plugins: [asciiOutput],
  },
  ...nodeVersionGates(),
]);
