import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/prometheus.ts', 'src/pino.ts', 'src/runtime.ts', 'src/testing.ts', 'src/bundle.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node22',
  platform: 'node',
});
