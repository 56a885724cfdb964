/**
 * Typed views of the few fields the simulated control loops read and write. The store keeps objects as loose
 * JSON ({@link KubeObject}); validation on every write makes these shapes hold for stored objects, so the loops
 * view them through {@link view} instead of checking every field by hand. Every field is optional, as in JSON.
 */
import type { KubeObject, ObjectMeta } from '../api/objects.js';

/** `v1.LabelSelectorRequirement` and `v1.NodeSelectorRequirement` (the latter adds `Gt`/`Lt`). */
export interface SelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** `metav1.LabelSelector`. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: SelectorRequirement[];
}

/** `v1.NodeSelectorTerm`. */
export interface NodeSelectorTerm {
  matchExpressions?: SelectorRequirement[];
  matchFields?: SelectorRequirement[];
}

/** `v1.NodeSelector`. */
export interface NodeSelector {
  nodeSelectorTerms?: NodeSelectorTerm[];
}

/** `v1.Taint`. */
export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** `v1.Toleration`. */
export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

/** `v1.ObjectReference`, as a PV's `spec.claimRef`. */
export interface ObjectReference {
  kind?: string;
  apiVersion?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

/** A status condition (pod, node); the time fields differ per kind. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
}

/** `storage.k8s.io/v1` StorageClass. */
export interface StorageClass extends KubeObject {
  provisioner?: string;
  volumeBindingMode?: string;
  allowedTopologies?: { matchLabelExpressions?: { key: string; values?: string[] }[] }[];
}

/** `v1.PersistentVolumeClaim`. */
export interface PersistentVolumeClaim extends KubeObject {
  metadata: ObjectMeta;
  spec?: {
    storageClassName?: string | null;
    volumeName?: string;
    accessModes?: string[];
    volumeMode?: string;
    selector?: LabelSelector | null;
    resources?: { requests?: Record<string, string | number> };
  };
  status?: {
    phase?: string;
    accessModes?: string[];
    capacity?: Record<string, string | number>;
    [key: string]: unknown;
  };
}

/** `v1.PersistentVolume`. */
export interface PersistentVolume extends KubeObject {
  spec?: {
    storageClassName?: string;
    claimRef?: ObjectReference | null;
    accessModes?: string[];
    volumeMode?: string;
    capacity?: Record<string, string | number>;
    persistentVolumeReclaimPolicy?: string;
    nodeAffinity?: { required?: NodeSelector };
    hostPath?: { path: string; type?: string };
    local?: { path: string };
    [key: string]: unknown;
  };
  status?: { phase?: string; message?: string; lastPhaseTransitionTime?: string; [key: string]: unknown };
}

/** `v1.Node`. */
export interface Node extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: Taint[]; [key: string]: unknown };
  status?: { conditions?: Condition[]; addresses?: { type: string; address: string }[]; [key: string]: unknown };
}

/** `v1.ConfigMapKeySelector` / `v1.SecretKeySelector`. */
export interface KeyRef {
  name?: string;
  key: string;
  optional?: boolean;
}

/** `v1.EnvVar`. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    configMapKeyRef?: KeyRef;
    secretKeyRef?: KeyRef;
    resourceFieldRef?: { resource: string };
  };
}

/** `v1.EnvFromSource`. */
export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

/** `v1.VolumeMount`. */
export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
}

/** `v1.Container`. */
export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  volumeMounts?: VolumeMount[];
  /** Only on init containers: `Always` makes it a sidecar. */
  restartPolicy?: string;
  /** `File` (default) or `FallbackToLogsOnError`. */
  terminationMessagePolicy?: string;
}

/** `v1.KeyToPath`: a configMap/secret key written to a file path. */
export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

/** `v1.DownwardAPIVolumeFile`. */
export interface DownwardAPIFile {
  path: string;
  fieldRef?: { fieldPath: string };
  resourceFieldRef?: { resource: string };
  mode?: number;
}

/** `v1.VolumeProjection`. */
export interface VolumeProjection {
  configMap?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { name?: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIFile[] };
  serviceAccountToken?: { path: string; audience?: string; expirationSeconds?: number };
  [key: string]: unknown;
}

/** `v1.Volume` (the sources the simulation knows). */
export interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  emptyDir?: Record<string, unknown>;
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIFile[]; defaultMode?: number };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
  [key: string]: unknown;
}

/** `v1.PodSpec`. */
export interface PodSpec {
  nodeName?: string;
  schedulerName?: string;
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector } };
  tolerations?: Toleration[];
  volumes?: Volume[];
  initContainers?: Container[];
  containers?: Container[];
  restartPolicy?: string;
  serviceAccountName?: string;
  terminationGracePeriodSeconds?: number;
  [key: string]: unknown;
}

/** `v1.Pod`. */
export interface Pod extends KubeObject {
  spec?: PodSpec;
  status?: { phase?: string; conditions?: Condition[]; [key: string]: unknown };
}

/** Views a stored object through one of the shapes above (no copy, no checks). */
export function view<T extends KubeObject>(obj: KubeObject): T {
  return obj as T;
}

/** Views a possibly missing object; `undefined` stays `undefined`. */
export function viewOpt<T extends KubeObject>(obj: KubeObject | undefined): T | undefined {
  return obj as T | undefined;
}
