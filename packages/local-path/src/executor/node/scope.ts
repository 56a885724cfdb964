/**
 * The scope of a node-mode provisioner: one per node (a DaemonSet), each handling the claims scheduled to its node
 * and the PVs it made there (with `kutti`, also those kuttiproject/provisioner-localvolume made there). The claims of
 * other nodes and their PVs are left to their node's provisioner without a word (`IgnoredError`).
 *
 * @module
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { ANN_SELECTED_NODE, IgnoredError, InfeasibleError } from '@kprov/provisioner-lib';
import type { StorageMode } from '../../config/index.js';
import { PROVISIONED_ON_ANNOTATION } from '../../volume/annotations.js';
import type { VolumeType } from '../../volume/parameters.js';
import type { VolumeScope } from '../executor.js';
import { kuttiNodeOf, kuttiVolumeType } from './kutti.js';

/** The start of the message of a claim refused in node mode because nothing selected a node for it. */
export const NODE_MODE_NEEDS_SELECTED_NODE = 'node mode needs volumeBindingMode WaitForFirstConsumer';

/** The claims and PVs of one node; see the module. */
export class NodeScope implements VolumeScope {
  constructor(
    /** This node. */
    readonly nodeName: string,
    /** Whether kutti's PVs of this node are deleted too, and new PVs are `local` as kutti's. */
    readonly kutti: boolean,
  ) {}

  /** Claims whose selected node is this node, and claims with no selected node at all (Immediate), refused later. */
  shouldProvision(claim: V1PersistentVolumeClaim): boolean {
    const selected = claim.metadata?.annotations?.[ANN_SELECTED_NODE] ?? '';
    return selected === '' || selected === this.nodeName;
  }

  checkSelectedNode(selectedNodeName: string, className: string): void {
    if (selectedNodeName === '') {
      throw new InfeasibleError(
        `${NODE_MODE_NEEDS_SELECTED_NODE}: StorageClass "${className}" binds Immediate, so no node was selected for the claim and no node's provisioner can make its volume; use a class with volumeBindingMode WaitForFirstConsumer`,
      );
    }
    if (selectedNodeName !== this.nodeName)
      throw new IgnoredError(`the claim is for node ${selectedNodeName}, not ${this.nodeName}`);
  }

  checkStorage(mode: StorageMode, className: string): void {
    if (mode === 'shared') {
      throw new Error(
        `StorageClass "${className}" uses sharedFileSystemPath, which node mode does not provision; run a provisioner without --node-mode for shared classes`,
      );
    }
  }

  /** kutti makes `local` PVs and its classes carry no annotation: `local` unless the claim or class chose a type. */
  volumeType(requested: VolumeType, claim: V1PersistentVolumeClaim, storageClass: V1StorageClass): VolumeType {
    if (!this.kutti) return requested;
    return kuttiVolumeType(requested, claim.metadata?.annotations, storageClass.metadata?.annotations);
  }

  /** `local.path.provisioner/provisioned-on`: only this node's provisioner deletes the PV. */
  annotations(nodeName: string): Record<string, string> {
    return { [PROVISIONED_ON_ANNOTATION]: nodeName };
  }

  /**
   * Only a PV whose `local.path.provisioner/provisioned-on` annotation (with `kutti`, else kutti's
   * `kuttiproject.org/provisionedOn`) names this node.
   */
  checkVolume(volume: V1PersistentVolume): { pvNameFolder: boolean } {
    const pvName = volume.metadata?.name ?? '';
    const ours = volume.metadata?.annotations?.[PROVISIONED_ON_ANNOTATION];
    const kutti = ours === undefined && this.kutti ? kuttiNodeOf(volume) : undefined;
    const owner = ours ?? kutti ?? '';
    if (owner !== this.nodeName) {
      throw new IgnoredError(
        owner === ''
          ? `volume ${pvName} has no ${PROVISIONED_ON_ANNOTATION} annotation: it was not made by a node-mode provisioner`
          : `volume ${pvName} was provisioned on node ${owner}, not on ${this.nodeName}`,
      );
    }
    return { pvNameFolder: kutti !== undefined };
  }

  checkVolumeStorage(pvName: string, mode: StorageMode): void {
    if (mode === 'shared')
      throw new IgnoredError(`volume ${pvName} is of a sharedFileSystemPath class, which node mode does not handle`);
  }

  /** The node affinity must name this node too; it is not looked up (it is this process's own). */
  checkVolumeNode(pvName: string, nodeName: string): boolean {
    if (nodeName !== this.nodeName)
      throw new IgnoredError(`the node affinity of volume ${pvName} names node ${nodeName}, not ${this.nodeName}`);
    return false;
  }
}
