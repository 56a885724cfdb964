import { defineConfig } from 'tsup';
import { binaryBundle } from '../../tsup.binary.js';

// The library (`dist/index.js`, dependencies external) and the binary (`dist/cli.js`, one bundle: see tsup.binary.ts).
export default defineConfig([
  {
    entry: ['src/index.ts'],
    format: ['esm'],
    dts: true,
    sourcemap: true,
    // Everything but the binary, which the other build writes at the same time.
    clean: ['!cli.js*'],
    target: 'node22',
    platform: 'node',
  },
  binaryBundle({ cli: 'src/cli.ts' }),
]);
