/**
 * Building a provisioner binary with tsup: {@link binaryBundle} gives the options that bundle it as the project's own
 * binaries are bundled, so that it runs as one file without `node_modules`. Needs `tsup` (an optional peer
 * dependency: only a build loads this module).
 *
 * @example
 * ```ts
 * // tsup.config.ts
 * import { defineConfig } from 'tsup';
 * import { binaryBundle } from '@kprov/provisioner-lib/bundle';
 *
 * export default defineConfig(binaryBundle({ cli: 'src/cli.ts' }));
 * ```
 *
 * @packageDocumentation
 */
export { binaryBundle } from './bundle/binary-bundle.js';
