import { cp } from 'node:fs/promises';
import { binaryBundle } from '@kprov/provisioner-lib/bundle';
import { defineConfig } from 'tsup';
import { libraryAndBinary } from '../../tsup.binary.js';

export default defineConfig(
  libraryAndBinary(binaryBundle({ cli: 'src/cli.ts' }), {
    // The block cleaners ship beside the code; the image puts them at /scripts, where the config refers to them.
    onSuccess: async () => {
      await cp('src/scripts', 'dist/scripts', { recursive: true });
    },
  }),
);
