/**
 * The PersistentVolume a local-path volume is served as (reference 3.7), and reading back from a PV where its
 * directory is and which node holds it (reference 4.2).
 *
 * @module
 */
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { StorageMode } from '../config/index.js';
import { SELECTED_NODE_ANNOTATION } from '../volume/annotations.js';
import type { VolumeType } from '../volume/parameters.js';

/** Inputs of {@link buildPersistentVolume}. */
export interface PersistentVolumeInputs {
  readonly pvName: string;
  readonly pvc: V1PersistentVolumeClaim;
  readonly storageClass: V1StorageClass;
  /** The volume directory on the node (or the shared file system). */
  readonly path: string;
  readonly volumeType: VolumeType;
  readonly mode: StorageMode;
  /** The selected node's name (`""` in shared mode without a node). */
  readonly nodeName: string;
  /** The selected node (its labels give the affinity value); `undefined` in shared mode without a node. */
  readonly node: V1Node | undefined;
  /** Node label key for the node affinity (node-local mode). */
  readonly nodeAffinityKey: string;
}

/**
 * The PV of reference 3.7: the `local.path.provisioner/selected-node` annotation, the class's reclaim policy
 * (default `Delete`), the claim's access modes and requested storage, `volumeMode: Filesystem`, a `hostPath`
 * (`DirectoryOrCreate`) or `local` source, and in node-local mode a required node affinity
 * `<nodeAffinityKey> In [<the node's label value, else its name>]` (none in shared mode).
 */
export function buildPersistentVolume(inputs: PersistentVolumeInputs): V1PersistentVolume {
  const { pvName, pvc, storageClass, path, nodeName } = inputs;
  const storage = pvc.spec?.resources?.requests?.storage;
  const volume: V1PersistentVolume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: pvName, annotations: { [SELECTED_NODE_ANNOTATION]: nodeName } },
    spec: {
      persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
      accessModes: [...(pvc.spec?.accessModes ?? [])],
      volumeMode: 'Filesystem',
      ...(storage === undefined ? {} : { capacity: { storage } }),
      ...(inputs.volumeType === 'local' ? { local: { path } } : { hostPath: { path, type: 'DirectoryOrCreate' } }),
    },
  };
  if (inputs.mode === 'local') {
    const value = inputs.node?.metadata?.labels?.[inputs.nodeAffinityKey] ?? nodeName;
    volume.spec!.nodeAffinity = {
      required: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: inputs.nodeAffinityKey, operator: 'In', values: [value] }] }],
      },
    };
  }
  return volume;
}

/**
 * The volume directory of a PV: exactly one of `spec.hostPath.path` and `spec.local.path`.
 *
 * @throws Error upstream's `no path set`.
 */
export function volumePathOf(volume: V1PersistentVolume): string {
  const hostPath = volume.spec?.hostPath?.path;
  const local = volume.spec?.local?.path;
  if ((hostPath === undefined) === (local === undefined)) throw new Error('no path set');
  return (hostPath ?? local)!;
}

/** The node term of a PV's node affinity: the label key and value it requires. */
export interface AffinityTerm {
  readonly key: string;
  readonly value: string;
}

/**
 * The first `In` expression of the PV's required node affinity, as upstream reads it.
 *
 * @throws Error upstream's `no NodeAffinity set`, `no NodeAffinity.Required set`, `multiple values for the node
 *   affinity` or `cannot find affinited node`.
 */
export function affinityTermOf(volume: V1PersistentVolume): AffinityTerm {
  const affinity = volume.spec?.nodeAffinity;
  if (affinity === undefined) throw new Error('no NodeAffinity set');
  if (affinity.required === undefined) throw new Error('no NodeAffinity.Required set');
  for (const term of affinity.required.nodeSelectorTerms ?? []) {
    for (const expr of term.matchExpressions ?? []) {
      if (expr.operator !== 'In') continue;
      if ((expr.values ?? []).length !== 1) throw new Error('multiple values for the node affinity');
      return { key: expr.key, value: expr.values![0]! };
    }
  }
  throw new Error('cannot find affinited node');
}
