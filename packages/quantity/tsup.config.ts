import { defineConfig } from 'tsup';
import { asciiOutput } from '../../tsup.ascii.js';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node22',
  platform: 'node',
  plugins: [asciiOutput],
});
