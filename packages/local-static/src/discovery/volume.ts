/**
 * The PersistentVolume of a discovered volume, shaped as upstream shapes it.
 *
 * @module
 */
import type { V1Node, V1NodeSelectorTerm, V1PersistentVolume } from '@kubernetes/client-node';
import type { VolumeMode } from '../config/config.js';

/** The annotation naming the provisioner that created a PV. */
export const PROVISIONED_BY_ANNOTATION = 'pv.kubernetes.io/provisioned-by';
/** The node affinity annotation of `useAlphaAPI` (Kubernetes before 1.10). */
export const ALPHA_NODE_AFFINITY_ANNOTATION = 'volume.alpha.kubernetes.io/node-affinity';
/** The Node label whose value pins a PV to its node. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
/** Prefix of the provisioner's name. */
export const PROVISIONER_NAME_PREFIX = 'local-volume-provisioner';

/** `local-volume-provisioner-<node>-<uid>`, or `local-volume-provisioner-<node>` with `useNodeNameOnly`. */
export function provisionerName(nodeName: string, nodeUid: string, useNodeNameOnly: boolean): string {
  return useNodeNameOnly
    ? `${PROVISIONER_NAME_PREFIX}-${nodeName}`
    : `${PROVISIONER_NAME_PREFIX}-${nodeName}-${nodeUid}`;
}

/** What {@link buildVolume} needs. */
export interface VolumeSpec {
  /** The PV's name (`local-pv-<hex>`). */
  name: string;
  /** `spec.local.path`: `hostDir/<entry>`. */
  hostPath: string;
  /** `spec.storageClassName`. */
  className: string;
  /** `spec.capacity.storage`, a quantity. */
  capacity: string;
  /** `spec.volumeMode`: the class's. */
  volumeMode: VolumeMode;
  /** The one access mode. */
  accessMode: string;
  /** `spec.local.fsType`. Default none. */
  fsType?: string | undefined;
  /** `spec.persistentVolumeReclaimPolicy`: the StorageClass's. */
  reclaimPolicy: string;
  /** `spec.mountOptions`: the StorageClass's; none when empty. */
  mountOptions: string[];
  /** `metadata.labels`; none when empty. */
  labels: Record<string, string>;
  /** The `pv.kubernetes.io/provisioned-by` annotation. */
  provisionerName: string;
  /** The value of the Node's `kubernetes.io/hostname` label. */
  hostname: string;
  /** Extra node selector terms of the class. */
  selector: V1NodeSelectorTerm[];
  /** Whether the node affinity also goes into the alpha annotation. */
  useAlphaAPI: boolean;
  /** The Node, when the PV is to be owned by it (`setPVOwnerRef`). Default: no owner. */
  owner?: V1Node | undefined;
}

/**
 * The PV object to create. With `useAlphaAPI` the node affinity is in the alpha annotation too; `spec.nodeAffinity`
 * is always set, as every API server since Kubernetes 1.10 requires it of a local PV.
 */
export function buildVolume(spec: VolumeSpec): V1PersistentVolume {
  const terms: V1NodeSelectorTerm[] = [
    { matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [spec.hostname] }] },
    ...spec.selector,
  ];
  const annotations: Record<string, string> = { [PROVISIONED_BY_ANNOTATION]: spec.provisionerName };
  if (spec.useAlphaAPI)
    annotations[ALPHA_NODE_AFFINITY_ANNOTATION] = JSON.stringify({
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms },
    });
  const owner = spec.owner;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name: spec.name,
      annotations,
      ...(Object.keys(spec.labels).length === 0 ? {} : { labels: spec.labels }),
      ...(owner === undefined
        ? {}
        : {
            ownerReferences: [
              { apiVersion: 'v1', kind: 'Node', name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '' },
            ],
          }),
    },
    spec: {
      capacity: { storage: spec.capacity },
      local: { path: spec.hostPath, ...(spec.fsType === undefined ? {} : { fsType: spec.fsType }) },
      accessModes: [spec.accessMode],
      storageClassName: spec.className,
      volumeMode: spec.volumeMode,
      persistentVolumeReclaimPolicy: spec.reclaimPolicy,
      ...(spec.mountOptions.length === 0 ? {} : { mountOptions: spec.mountOptions }),
      // Also with useAlphaAPI (upstream leaves it out then): API servers since 1.10 refuse a local PV without it.
      nodeAffinity: { required: { nodeSelectorTerms: terms } },
    },
  };
}

/** The labels of new PVs: the `nodeLabelsForPV` the Node has, then `labelsForPV` on top. */
export function volumeLabels(
  node: V1Node,
  nodeLabelsForPV: readonly string[],
  labelsForPV: Readonly<Record<string, string>>,
): Record<string, string> {
  const labels: Record<string, string> = {};
  const nodeLabels = node.metadata?.labels ?? {};
  for (const key of nodeLabelsForPV) {
    const value = nodeLabels[key];
    if (value !== undefined) labels[key] = value;
  }
  return { ...labels, ...labelsForPV };
}
