/**
 * The usage of node paths: capacity, allocated, free and volume count, as the metrics and the `status` command show
 * them.
 *
 * @module
 */
import type { Ledger } from './ledger.js';
import type { NodePath } from './paths.js';
import type { FileSystemSize } from '../executor/executor.js';

/** One node path's usage. */
export interface PathUsage {
  /** The node name. */
  readonly node: string;
  /** The base path. */
  readonly path: string;
  /** The declared capacity, or the measured size of an `auto` path; `undefined` when unknown or none declared. */
  readonly capacity: bigint | undefined;
  /** Whether the capacity is `auto` (the file system's size). */
  readonly auto: boolean;
  /** The sum of the sizes of the volumes on the path (and of those being made). */
  readonly allocated: bigint;
  /** How many volumes `allocated` counts. */
  readonly volumes: number;
  /** `capacity − allocated` (negative when over-committed, e.g. by volumes made before the budget was declared). */
  readonly free: bigint | undefined;
  /** The file system's free space, when measured (`auto` paths). */
  readonly fileSystemFree: bigint | undefined;
}

/** The usage of each node path, `measured` giving the last measurement of `auto` paths by `node\0path`. */
export function usageOf(
  paths: readonly NodePath[],
  ledger: Ledger,
  measured: (node: string, path: string) => FileSystemSize | undefined,
): PathUsage[] {
  return paths.map(({ node, path, capacity: declared }) => {
    const { bytes, volumes } = ledger.allocated(node, path);
    const fs = declared === 'auto' ? measured(node, path) : undefined;
    const capacity = declared === 'auto' ? fs?.size : declared;
    return {
      node,
      path,
      capacity,
      auto: declared === 'auto',
      allocated: bytes,
      volumes,
      free: capacity === undefined ? undefined : capacity - bytes,
      fileSystemFree: fs?.free,
    };
  });
}
