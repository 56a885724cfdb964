import { cp } from 'node:fs/promises';
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
    // The block cleaners ship beside the code; the image puts them at /scripts, where the config refers to them.
    onSuccess: async () => {
      await cp('src/scripts', 'dist/scripts', { recursive: true });
    },
  },
  binaryBundle({ cli: 'src/cli.ts' }),
]);
