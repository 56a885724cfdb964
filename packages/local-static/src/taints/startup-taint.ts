/**
 * Upstream's startup-taint removal (`removeNodeNotReadyTaint`): once the provisioner is ready, the taint that kept
 * pods off the node until then is taken off its Node, once per process.
 *
 * @module
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import { describeError, sleep, withSignal, type Clock, type Logger } from '@kprov/provisioner-lib';

/** What a {@link StartupTaint} works with. */
export interface StartupTaintOptions {
  /** Reads and writes the Node. */
  core: Pick<CoreV1Api, 'readNode' | 'replaceNode'>;
  /** This node's name. */
  nodeName: string;
  clock: Clock;
  logger: Logger;
}

/** What the config says of the taint: `removeNodeNotReadyTaint` and `provisionerNotReadyNodeTaintKey`. */
export interface StartupTaintConfig {
  removeNodeNotReadyTaint: boolean;
  provisionerNotReadyNodeTaintKey: string;
}

/** The startup taint of this node, removed once. */
export class StartupTaint {
  private removed = false;

  constructor(private readonly options: StartupTaintOptions) {}

  /**
   * Removes the taint `provisionerNotReadyNodeTaintKey` from the Node once, keeping its other taints, when
   * `removeNodeNotReadyTaint` is on (upstream's loop asks the opposite condition and never removes it); 3 tries.
   * Called after a pass without errors.
   */
  async removeOnce(config: StartupTaintConfig, signal: AbortSignal): Promise<void> {
    const { core, nodeName, clock, logger } = this.options;
    const key = config.provisionerNotReadyNodeTaintKey;
    if (this.removed || !config.removeNodeNotReadyTaint || key === '') return;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (attempt > 0) await sleep(clock, 1000 * attempt, signal).catch(() => undefined);
      if (signal.aborted) return;
      try {
        const node = await core.readNode({ name: nodeName }, withSignal(signal));
        const taints = node.spec?.taints ?? [];
        const kept = taints.filter((t) => t.key !== key);
        if (kept.length !== taints.length) {
          node.spec = { ...node.spec, taints: kept };
          await core.replaceNode({ name: nodeName, body: node }, withSignal(signal));
          logger.info({ node: nodeName, taint: key }, 'Removed the startup taint from the Node');
        }
        this.removed = true;
        return;
      } catch (err) {
        if (signal.aborted) return;
        logger.error({ node: nodeName, taint: key, err: describeError(err) }, 'Could not remove the startup taint');
      }
    }
  }
}
