import { cp } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node22',
  platform: 'node',
  // The block cleaners ship beside the code; the image puts them at /scripts, where the config refers to them.
  onSuccess: async () => {
    await cp('src/scripts', 'dist/scripts', { recursive: true });
  },
});
