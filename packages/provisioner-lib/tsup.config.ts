import { defineConfig } from 'tsup';
import { asciiOutput } from '../../tsup.ascii.js';

export default defineConfig({
  entry: ['src/index.ts', 'src/prometheus.ts', 'src/pino.ts', 'src/runtime.ts', 'src/testing.ts', 'src/bundle.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node22',
  platform: 'node',
  plugins: [asciiOutput],
});
