import type { Options } from 'tsup';

/** An esbuild plugin, as tsup takes them. */
export type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];
