/** Helpers for the config tests. */
import { ConfigError } from '../../src/config/index.js';

/** Runs `fn`, expecting a {@link ConfigError}, and returns it. */
export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

/** JSON text for an object. */
export function json(value: unknown): string {
  return JSON.stringify(value);
}
