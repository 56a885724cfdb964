/**
 * Size bounds of a StorageClass (ours, opt-in): `minSize` and `maxSize`, as StorageClass parameters or in the
 * class's config (`storageClassConfigs.<class>`, or the top level); the parameter wins. A claim outside them is
 * refused before anything is created.
 *
 * @module
 */
import { InfeasibleError } from '@kprov/provisioner-lib';
import type { V1StorageClass } from '@kubernetes/client-node';
import { ConfigError, formatBytes, parseSize, type StorageClassConfig } from '../config/index.js';

/** StorageClass parameter: the smallest request a claim may make (a quantity). */
export const PARAM_MIN_SIZE = 'minSize';
/** StorageClass parameter: the largest request a claim may make (a quantity). */
export const PARAM_MAX_SIZE = 'maxSize';

/** One bound and where it was set, for the message. */
export interface SizeBound {
  /** The bound in bytes. */
  readonly bytes: bigint;
  /** `parameter minSize of StorageClass "x"` or `minSize of config.json for StorageClass "x"`. */
  readonly source: string;
}

/** The bounds that apply to a class: its parameters, else its config's. */
export function sizeBoundsOf(
  storageClass: V1StorageClass,
  classConfig: StorageClassConfig,
): { min: SizeBound | undefined; max: SizeBound | undefined } {
  const className = storageClass.metadata?.name ?? '';
  const bound = (param: string, configured: bigint | undefined): SizeBound | undefined => {
    const text = storageClass.parameters?.[param];
    if (text !== undefined) {
      let bytes: bigint;
      try {
        bytes = parseSize(text, `parameter ${param}`);
      } catch (err) {
        const hint = err instanceof ConfigError ? err.hint : '';
        throw new InfeasibleError(`invalid parameter ${param} "${text}" of StorageClass "${className}"; ${hint}`);
      }
      return { bytes, source: `parameter ${param} of StorageClass "${className}"` };
    }
    if (configured === undefined) return undefined;
    return { bytes: configured, source: `${param} of the config of StorageClass "${className}"` };
  };
  return { min: bound(PARAM_MIN_SIZE, classConfig.minSize), max: bound(PARAM_MAX_SIZE, classConfig.maxSize) };
}

/**
 * Refuses a request outside the class's bounds.
 *
 * @throws InfeasibleError `the claim <c> requests <size>, less than the minimum <min> (<source>)` or `..., more than
 *   the maximum <max> (<source>)`.
 */
export function checkSizeBounds(
  request: bigint,
  claim: string,
  storageClass: V1StorageClass,
  classConfig: StorageClassConfig,
): void {
  const { min, max } = sizeBoundsOf(storageClass, classConfig);
  if (min !== undefined && request < min.bytes) {
    throw new InfeasibleError(
      `the claim ${claim} requests ${formatBytes(request)}, less than the minimum ${formatBytes(min.bytes)} (${min.source}); ask for at least ${formatBytes(min.bytes)}`,
    );
  }
  if (max !== undefined && request > max.bytes) {
    throw new InfeasibleError(
      `the claim ${claim} requests ${formatBytes(request)}, more than the maximum ${formatBytes(max.bytes)} (${max.source}); ask for at most ${formatBytes(max.bytes)}`,
    );
  }
}
