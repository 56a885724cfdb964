/**
 * The nodes of claims and volumes, read through the API: the node selected for a claim, the node that holds a PV
 * (from its node affinity, which cannot be edited), and whether that node still exists.
 *
 * @module
 */
import type { V1Node, V1PersistentVolume } from '@kubernetes/client-node';
import {
  describeError,
  isNotFound,
  ProvisioningError,
  ProvisioningState,
  withSignal,
  type CoreV1Calls,
  type Logger,
} from '@kprov/provisioner-lib';
import { SELECTED_NODE_ANNOTATION } from '../volume/annotations.js';
import { affinityTermOf } from './persistent-volume.js';
import { VOLUME_CLEANUP_SKIPPED, VOLUME_NODE_MISMATCH, type VolumeWarning } from './warnings.js';

/** More than one node matches a volume's node affinity, and its selected-node annotation names none of them. */
export class AmbiguousNodeError extends Error {
  override readonly name = 'AmbiguousNodeError';
}

/** Reads nodes for the provisioner; see the module. */
export class VolumeNodes {
  constructor(
    private readonly core: CoreV1Calls,
    private readonly logger: Logger,
    private readonly warn: VolumeWarning | undefined,
  ) {}

  /** The selected node; NotFound asks the controller to reschedule, as the Go library does. */
  async selected(name: string, signal: AbortSignal): Promise<V1Node> {
    try {
      return await this.core.readNode({ name }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) {
        throw new ProvisioningError(`selected node ${name} does not exist; rescheduling`, {
          state: ProvisioningState.Reschedule,
          cause: err,
        });
      }
      throw new Error(`failed to get target node: ${describeError(err)}`, { cause: err });
    }
  }

  /**
   * The node holding a node-local PV, from its node affinity (which cannot be edited): the node named by the
   * `local.path.provisioner/selected-node` annotation when that node matches the affinity (the annotation can be
   * edited, so it is only believed where it agrees); else the one node carrying the affinity label; else the affinity
   * value taken as a node name (upstream). Rejects with an {@link AmbiguousNodeError} when several nodes match and the
   * annotation names none of them, and with the abort's error once `signal` is aborted; other errors listing the nodes
   * are logged and the affinity value is used.
   */
  async holding(volume: V1PersistentVolume, signal: AbortSignal): Promise<string> {
    const term = affinityTermOf(volume);
    const pvName = volume.metadata?.name ?? '';
    const agrees = (node: V1Node): boolean => (node.metadata?.labels?.[term.key] ?? node.metadata?.name) === term.value;
    const annotated = volume.metadata?.annotations?.[SELECTED_NODE_ANNOTATION] ?? '';
    if (annotated !== '') {
      try {
        const node = await this.core.readNode({ name: annotated }, withSignal(signal));
        if (agrees(node)) return annotated;
        const message =
          `the annotation ${SELECTED_NODE_ANNOTATION}=${annotated} of volume ${pvName} disagrees with its node affinity ` +
          `${term.key} In [${term.value}]; the node affinity is used`;
        this.logger.warn({ pv: pvName }, message);
        this.warn?.(volume, message, VOLUME_NODE_MISMATCH);
      } catch (err) {
        if (!isNotFound(err))
          this.logger.warn({ pv: pvName, err: describeError(err) }, `Cannot read node ${annotated}`);
      }
    }
    try {
      const nodes = await this.core.listNode({ labelSelector: `${term.key}=${term.value}` }, withSignal(signal));
      const matching = nodes.items.filter(agrees);
      if (matching.length === 1) return matching[0]!.metadata?.name ?? term.value;
      if (matching.length > 1) {
        throw new AmbiguousNodeError(
          `volume ${pvName}: ${matching.length} nodes match its node affinity ${term.key} In [${term.value}] and its ${SELECTED_NODE_ANNOTATION} annotation names none of them; cannot tell which node holds it`,
        );
      }
    } catch (err) {
      if (err instanceof AmbiguousNodeError || signal.aborted) throw err;
      this.logger.warn({ err: describeError(err) }, `Cannot list nodes with ${term.key}=${term.value}`);
    }
    return term.value;
  }

  /**
   * Whether the node holding a volume exists. When it is gone the cleanup is skipped with a
   * {@link VOLUME_CLEANUP_SKIPPED} warning (upstream's v0.0.33 fix); other errors do not stop the cleanup, as upstream.
   */
  async exists(volume: V1PersistentVolume, nodeName: string, path: string, signal: AbortSignal): Promise<boolean> {
    const pvName = volume.metadata?.name ?? '';
    try {
      await this.core.readNode({ name: nodeName }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) {
        const message = `Node ${nodeName} does not exist, skipping cleanup of volume ${pvName}: its directory ${path} is left on that node's disk`;
        this.logger.warn({ pv: pvName, node: nodeName }, message);
        this.warn?.(volume, message, VOLUME_CLEANUP_SKIPPED);
        return false;
      }
      this.logger.warn(
        { pv: pvName, node: nodeName, err: describeError(err) },
        `Cannot read node ${nodeName}, deleting anyway`,
      );
    }
    return true;
  }
}
