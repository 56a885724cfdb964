import { cp } from 'node:fs/promises';
import { defineConfig } from 'tsup';
import { libraryAndBinary } from '../../tsup.binary.js';

export default defineConfig(
  libraryAndBinary(
    { cli: 'src/cli.ts' },
    {
      // The block cleaners ship beside the code; the image puts them at /scripts, where the config refers to them.
      onSuccess: async () => {
        await cp('src/scripts', 'dist/scripts', { recursive: true });
      },
    },
  ),
);
