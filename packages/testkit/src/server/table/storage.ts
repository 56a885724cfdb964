/** The storage printers: PersistentVolume, PersistentVolumeClaim and StorageClass. */

import type { KubeObject } from '../../api/objects.js';
import { AGE_COLUMN, NAME_COLUMN, age, arr, column, deleting, rec, str } from './common.js';
import type { Printer } from './types.js';

/** The access modes in their short forms, de-duplicated and always in the order RWO, ROX, RWX, RWOP. */
function accessModesString(modes: unknown): string {
  const set = new Set(arr(modes));
  const short: [string, string][] = [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ];
  return short
    .filter(([mode]) => set.has(mode))
    .map(([, s]) => s)
    .join(',');
}

/**
 * A `storage` quantity as the printer shows it. The real server has canonicalised quantities when it stored the
 * object; this prints the stored string as is, and `0` (a zero Quantity) when the key is missing.
 */
function storageOf(resources: unknown): string {
  const q = rec(resources).storage;
  if (typeof q === 'string' && q !== '') return q;
  if (typeof q === 'number') return String(q);
  return '0';
}

const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** The class of a PV or PVC: the beta annotation when present (even empty), else `spec.storageClassName`. */
function storageClassOf(obj: KubeObject): string {
  const annotations = obj.metadata.annotations ?? {};
  if (Object.hasOwn(annotations, BETA_CLASS_ANNOTATION)) return annotations[BETA_CLASS_ANNOTATION] ?? '';
  return str(rec(obj.spec).storageClassName);
}

/** `spec.volumeAttributesClassName`, or `<unset>`. */
function attributesClassOf(obj: KubeObject): string {
  const v = rec(obj.spec).volumeAttributesClassName;
  return typeof v === 'string' ? v : '<unset>';
}

/** `spec.volumeMode`, or `<unset>`. */
function volumeModeOf(obj: KubeObject): string {
  const v = rec(obj.spec).volumeMode;
  return typeof v === 'string' ? v : '<unset>';
}

/** PersistentVolumes: NAME, CAPACITY, ACCESS MODES, RECLAIM POLICY, STATUS, CLAIM, STORAGECLASS, ...; wide VOLUMEMODE. */
export const PERSISTENT_VOLUME_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Capacity',
      'string',
      "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
    ),
    column(
      'Access Modes',
      'string',
      'accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes',
    ),
    column(
      'Reclaim Policy',
      'string',
      'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming',
    ),
    column(
      'Status',
      'string',
      'phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase',
    ),
    column(
      'Claim',
      'string',
      'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding',
    ),
    column('StorageClass', 'string', 'StorageClass of the pv'),
    column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pv'),
    column(
      'Reason',
      'string',
      'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.',
    ),
    AGE_COLUMN,
    column(
      'VolumeMode',
      'string',
      'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.',
      { priority: 1 },
    ),
  ],
  print(pv, now) {
    const spec = rec(pv.spec);
    const status = rec(pv.status);
    const claimRef = spec.claimRef;
    const claim =
      claimRef === undefined || claimRef === null ? '' : `${str(rec(claimRef).namespace)}/${str(rec(claimRef).name)}`;
    return {
      cells: [
        str(pv.metadata.name),
        storageOf(spec.capacity),
        accessModesString(spec.accessModes),
        str(spec.persistentVolumeReclaimPolicy),
        deleting(pv) ? 'Terminating' : str(status.phase),
        claim,
        storageClassOf(pv),
        attributesClassOf(pv),
        str(status.reason),
        age(pv.metadata, now),
        volumeModeOf(pv),
      ],
    };
  },
};

/** PersistentVolumeClaims: NAME, STATUS, VOLUME, CAPACITY, ACCESS MODES, STORAGECLASS, ...; wide VOLUMEMODE. */
export const PERSISTENT_VOLUME_CLAIM_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'phase represents the current phase of PersistentVolumeClaim.'),
    column('Volume', 'string', 'volumeName is the binding reference to the PersistentVolume backing this claim.'),
    column('Capacity', 'string', 'capacity represents the actual resources of the underlying volume.'),
    column(
      'Access Modes',
      'string',
      'accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1',
    ),
    column('StorageClass', 'string', 'StorageClass of the pvc'),
    column('VolumeAttributesClass', 'string', 'VolumeAttributesClass of the pvc'),
    AGE_COLUMN,
    column(
      'VolumeMode',
      'string',
      'volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.',
      { priority: 1 },
    ),
  ],
  print(pvc, now) {
    const spec = rec(pvc.spec);
    const status = rec(pvc.status);
    const volumeName = str(spec.volumeName);
    // Capacity and access modes come from the bound volume, so they stay empty until the claim names one.
    const bound = volumeName !== '';
    return {
      cells: [
        str(pvc.metadata.name),
        deleting(pvc) ? 'Terminating' : str(status.phase),
        volumeName,
        bound ? storageOf(status.capacity) : '',
        bound ? accessModesString(status.accessModes) : '',
        storageClassOf(pvc),
        attributesClassOf(pvc),
        age(pvc.metadata, now),
        volumeModeOf(pvc),
      ],
    };
  },
};

const DEFAULT_CLASS_ANNOTATIONS = [
  'storageclass.kubernetes.io/is-default-class',
  'storageclass.beta.kubernetes.io/is-default-class',
];

/** StorageClasses: NAME (with ` (default)`), PROVISIONER, RECLAIMPOLICY, VOLUMEBINDINGMODE, ALLOWVOLUMEEXPANSION, AGE. */
export const STORAGE_CLASS_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Provisioner', 'string', 'provisioner indicates the type of the provisioner.'),
    column(
      'ReclaimPolicy',
      'string',
      'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.',
    ),
    column(
      'VolumeBindingMode',
      'string',
      'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.',
    ),
    column(
      'AllowVolumeExpansion',
      'string',
      'allowVolumeExpansion shows whether the storage class allow volume expand.',
    ),
    AGE_COLUMN,
  ],
  print(sc, now) {
    const annotations = sc.metadata.annotations ?? {};
    const isDefault = DEFAULT_CLASS_ANNOTATIONS.some((a) => annotations[a] === 'true');
    const reclaimPolicy = sc.reclaimPolicy;
    const bindingMode = sc.volumeBindingMode;
    const expansion = sc.allowVolumeExpansion;
    return {
      cells: [
        `${str(sc.metadata.name)}${isDefault ? ' (default)' : ''}`,
        str(sc.provisioner),
        typeof reclaimPolicy === 'string' ? reclaimPolicy : 'Delete',
        typeof bindingMode === 'string' ? bindingMode : 'Immediate',
        typeof expansion === 'boolean' ? expansion : false,
        age(sc.metadata, now),
      ],
    };
  },
};
