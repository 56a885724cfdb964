/**
 * A check of `nodePathMap` against the cluster: nodes it lists that do not exist are allowed (nodes come and go, and a
 * node added later with that name gets those paths) but often a typo, so each is logged once as a warning.
 *
 * @packageDocumentation
 */
import { describeError, withSignal, type CoreV1Calls, type Logger } from '@kprov/provisioner-lib';
import { DEFAULT_PATH_FOR_NON_LISTED_NODES, type Config } from './schema.js';

/** Node names a config's `nodePathMap`s list (every class), without {@link DEFAULT_PATH_FOR_NON_LISTED_NODES}. */
function listedNodes(config: Config): Set<string> {
  const names = new Set<string>();
  for (const classConfig of [config.defaultConfig, ...config.storageClassConfigs.values()]) {
    for (const node of classConfig?.nodePathMap.keys() ?? [])
      if (node !== DEFAULT_PATH_FOR_NON_LISTED_NODES) names.add(node);
  }
  return names;
}

/** Warns about the nodes of configs that do not exist, once per name; see the module. */
export class UnknownNodeWarnings {
  private readonly warned = new Set<string>();

  constructor(
    private readonly core: CoreV1Calls,
    private readonly logger: Logger,
  ) {}

  /** Looks at the nodes `config` lists; a failed node list is only logged at debug. */
  async check(config: Config, signal: AbortSignal): Promise<void> {
    const listed = [...listedNodes(config)].filter((n) => !this.warned.has(n));
    if (listed.length === 0) return;
    let existing: Set<string>;
    try {
      existing = new Set((await this.core.listNode({}, withSignal(signal))).items.map((n) => n.metadata?.name ?? ''));
    } catch (err) {
      this.logger.debug({ err: describeError(err) }, 'Could not list nodes to check the nodePathMap');
      return;
    }
    for (const node of listed) {
      if (existing.has(node)) continue;
      this.warned.add(node);
      this.logger.warn(
        { node },
        `nodePathMap lists node ${node}, which does not exist in the cluster; its paths apply if a node of that name joins (check the spelling)`,
      );
    }
  }
}
