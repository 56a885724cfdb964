/**
 * The node paths a class may use on a node, with the capacity each declares, and every node path of a config that a
 * report shows.
 *
 * @module
 */
import {
  DEFAULT_PATH_FOR_NON_LISTED_NODES,
  pathsForNode,
  type Config,
  type PathCapacity,
  type StorageClassConfig,
} from '../config/index.js';

/** A base path of a node and its declared capacity (`undefined`: none, no budget). */
export interface NodePath {
  /** The node name. */
  readonly node: string;
  /** The cleaned base path. */
  readonly path: string;
  /** The declared capacity; `undefined` when none (no budget). */
  readonly capacity: PathCapacity | undefined;
}

/** The declared capacity of `path` in the node's entry (or the default entry the node falls back to). */
export function declaredCapacity(
  classConfig: StorageClassConfig,
  entry: string,
  path: string,
): PathCapacity | undefined {
  return classConfig.capacities?.get(entry)?.get(path);
}

/**
 * The paths of `node` in a node-local class config, with their capacities; `undefined` when the node has no entry
 * (nor a default one), which the caller leaves to upstream's error.
 */
export function nodePaths(classConfig: StorageClassConfig, node: string): NodePath[] | undefined {
  let found;
  try {
    found = pathsForNode(classConfig, node);
  } catch {
    return undefined;
  }
  const entry = found.fromDefault ? DEFAULT_PATH_FOR_NON_LISTED_NODES : node;
  return found.paths.map((path) => ({ node, path, capacity: declaredCapacity(classConfig, entry, path) }));
}

/** Whether any path of the class declares a capacity: the class has opted in. */
export function hasBudgets(classConfig: StorageClassConfig): boolean {
  return classConfig.capacities !== undefined && classConfig.capacities.size > 0;
}

/**
 * Whether any class of the config declares a capacity: only then do the budgets, their PV watch and expansion run,
 * so that a config without capacities costs nothing.
 */
export function usesCapacity(config: Config): boolean {
  return [config.defaultConfig, ...config.storageClassConfigs.values()].some((c) => c !== undefined && hasBudgets(c));
}

/** The tighter of two declared capacities: the smaller number; `auto` only when neither gives a number. */
function tighter(a: PathCapacity | undefined, b: PathCapacity | undefined): PathCapacity | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === 'auto') return b;
  if (b === 'auto') return a;
  return a < b ? a : b;
}

/**
 * Every node path of the config's node-local classes: the paths of each listed node, and the default entry's paths
 * for each of `nodes` (nodes holding volumes, or the cluster's nodes) that a class does not list. A path listed by
 * several classes appears once, with the tightest capacity declared.
 */
export function configNodePaths(config: Config, nodes: Iterable<string>): NodePath[] {
  const byKey = new Map<string, NodePath>();
  const add = (node: string, path: string, capacity: PathCapacity | undefined): void => {
    const key = `${node}\u0000${path}`;
    const old = byKey.get(key);
    byKey.set(key, { node, path, capacity: tighter(old?.capacity, capacity) });
  };
  const known = [...nodes];
  for (const classConfig of [config.defaultConfig, ...config.storageClassConfigs.values()]) {
    if (classConfig === undefined) continue;
    for (const [entry, paths] of classConfig.nodePathMap) {
      const targets =
        entry === DEFAULT_PATH_FOR_NON_LISTED_NODES ? known.filter((n) => !classConfig.nodePathMap.has(n)) : [entry];
      for (const node of targets) for (const path of paths) add(node, path, declaredCapacity(classConfig, entry, path));
    }
  }
  return [...byKey.values()].sort((a, b) =>
    a.node === b.node ? a.path.localeCompare(b.path) : a.node.localeCompare(b.node),
  );
}
