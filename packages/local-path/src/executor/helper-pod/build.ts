/**
 * Builds the helper pod that creates or deletes a volume directory on a node, from the (validated) template, as
 * upstream's `createHelperPod` does. A pure function: no API calls, the template is not modified.
 *
 * @module
 */
import type { V1Container, V1Pod, V1Toleration, V1Volume, V1VolumeMount, V1KeyToPath } from '@kubernetes/client-node';
import { guardedCommand } from '../../volume/path-guard.js';
import { cleanPath } from '../../volume/path-pattern.js';
import { scriptInterface, type ScriptInputs, type VolumeAction } from '../script.js';

/** Upstream's limit on helper pod names. */
export const HELPER_POD_NAME_MAX_LENGTH = 128;
/** Name of the volume holding the volume's parent directory. */
export const HELPER_DATA_VOLUME_NAME = 'data';
/** Name of the ConfigMap volume holding the scripts. */
export const HELPER_SCRIPT_VOLUME_NAME = 'script';
/** Where the scripts are mounted. */
export const HELPER_SCRIPT_DIR = '/script';
/** The toleration added when the template has no `tolerations` list. */
export const DEFAULT_HELPER_TOLERATION: Readonly<V1Toleration> = Object.freeze({
  key: 'node.kubernetes.io/disk-pressure',
  operator: 'Exists',
  effect: 'NoSchedule',
});

/** Inputs of {@link buildHelperPod}: the pod's, then the script's ({@link ScriptInputs}). */
export interface HelperPodInputs extends ScriptInputs {
  /** `create` (the setup script) or `delete` (the teardown script). */
  readonly action: VolumeAction;
  /** The helper pod template (from `loadHelperPodTemplate`); deep-copied, never modified. */
  readonly template: V1Pod;
  /** The provisioner's namespace; always the pod's namespace, whatever the template says. */
  readonly namespace: string;
  /** `--service-account-name`; always the pod's service account. */
  readonly serviceAccountName: string;
  /** `--configmap-name`: the ConfigMap holding `setup` and `teardown`. */
  readonly configMapName: string;
  /** The PV name (`pvc-<uid>`). */
  readonly pvName: string;
  /** The volume's absolute path on the node. */
  readonly path: string;
  /** The node to run on; `""` in shared mode without a selected node (the pod is then scheduled normally). */
  readonly node: string;
  /** Whether the class uses `sharedFileSystemPath` (then `node` may be empty). */
  readonly shared: boolean;
  /**
   * `setupCommand` from the config: replaces the guarded `/bin/sh /script/setup` with `[setupCommand]`, which runs
   * without the guard (the program must refuse links itself).
   */
  readonly setupCommand?: string | undefined;
  /** `teardownCommand` from the config: replaces the guarded `/bin/sh /script/teardown`, as `setupCommand`. */
  readonly teardownCommand?: string | undefined;
  /**
   * The base path the volume lies strictly inside. When given, the `data` volume is that base path instead of the
   * volume's parent directory, so every component below the base path is seen (and can be resolved) by the script:
   * the kubelet follows symbolic links in a hostPath before mounting it, so a link among the parents would
   * otherwise be crossed unseen.
   */
  readonly basePath?: string | undefined;
  /** Labels added to the pod's (the template's are kept): which operation, volume and claim it is for. */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  /** Annotations added to the pod (the template's are kept). */
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

/** A helper pod that cannot be built; messages are upstream's, wrapped `failed to <action> volume <pv>: …`. */
export class HelperPodError extends Error {
  override readonly name = 'HelperPodError';
}

/** Finds the mount `name` or appends it at `mountPath`; an existing mount with an empty path gets `mountPath`. */
function addVolumeMount(mounts: V1VolumeMount[], name: string, mountPath: string): V1VolumeMount {
  const existing = mounts.find((m) => m.name === name);
  if (existing !== undefined) {
    if ((existing.mountPath ?? '') === '') existing.mountPath = mountPath;
    return existing;
  }
  const mount: V1VolumeMount = { name, mountPath };
  mounts.push(mount);
  return mount;
}

/**
 * Builds the helper pod for `action`:
 *
 * - name `<template name>-<action>-<pv>` truncated to 128 characters; namespace the provisioner's;
 * - `labels` and `annotations` added to the template's;
 * - `nodeName` the target node unless the template set one; `serviceAccountName` overwritten;
 *   `automountServiceAccountToken: false` unless the template sets it (upstream's helper pods carry the
 *   provisioner's own token, which may create and delete PVs); `restartPolicy: Never`; the template's tolerations if
 *   it has a list (even empty), else the disk-pressure one;
 * - volumes appended: `data` (hostPath of `basePath` when given, else of the parent directory as upstream,
 *   `DirectoryOrCreate`) and, unless both commands are overridden, `script` (the ConfigMap with the non-overridden
 *   `setup`/`teardown` items);
 * - first container: mounts `script` at `/script` and `data` at its host path, command
 *   `/bin/sh /script/<setup|teardown>` behind the path guard's prologue (`/bin/sh -c <prologue> local-path-guard
 *   <action> /bin/sh /script/<setup|teardown>`, see `volume/path-guard.ts`: whatever the script is, a path through a
 *   symbolic link below `VOL_BASE` is refused before it runs), or `[setupCommand|teardownCommand]` as it is; args
 *   `-p <dir> -s <bytes> -m <mode> -a <action>`, and env `VOL_DIR`, `VOL_MODE`, `VOL_SIZE_BYTES`, `VOL_USER`,
 *   `VOL_GROUP`, `VOL_PERM` appended, then `VOL_BASE` (ours: the mounted directory, below which the guard allows no
 *   symbolic link).
 *
 * Throws a {@link HelperPodError}: `invalid empty name or path or node`, `volume path <p> is not absolute`, or
 * `invalid path <action> for <path>: cannot find parent dir or volume dir or parent dir is relative`, each wrapped
 * `failed to <action> volume <pv>: …`.
 */
export function buildHelperPod(inputs: HelperPodInputs): V1Pod {
  const { action, pvName } = inputs;
  const fail = (message: string): HelperPodError =>
    new HelperPodError(`failed to ${action} volume ${pvName}: ${message}`);

  if (pvName === '' || inputs.path === '' || (!inputs.shared && inputs.node === ''))
    throw fail('invalid empty name or path or node');
  if (!inputs.path.startsWith('/')) throw fail(`volume path ${inputs.path} is not absolute`);
  const cleaned = cleanPath(inputs.path);
  const base = inputs.basePath === undefined ? undefined : cleanPath(inputs.basePath);
  if (base !== undefined && (base === '/' || !cleaned.startsWith(`${base}/`))) {
    throw fail(`volume path ${inputs.path} is not inside the base path ${inputs.basePath}`);
  }
  // The mounted directory and the volume directory relative to it.
  const slash = base === undefined ? cleaned.lastIndexOf('/') : base.length;
  let parentDir = cleaned.slice(0, slash);
  const volumeDir = cleaned.slice(slash + 1);

  const command = action === 'create' ? inputs.setupCommand : inputs.teardownCommand;
  const items: V1KeyToPath[] = [];
  if ((inputs.setupCommand ?? '') === '') items.push({ key: 'setup', path: 'setup' });
  if ((inputs.teardownCommand ?? '') === '') items.push({ key: 'teardown', path: 'teardown' });

  const pod = structuredClone(inputs.template);
  const metadata = (pod.metadata ??= {});
  const spec = (pod.spec ??= { containers: [] });
  const container: V1Container | undefined = spec.containers[0];
  if (container === undefined) throw fail('helper pod template does not specify any container');

  const mounts = (container.volumeMounts ??= []);
  if (items.length > 0)
    addVolumeMount(mounts, HELPER_SCRIPT_VOLUME_NAME, HELPER_SCRIPT_DIR).mountPath = HELPER_SCRIPT_DIR;
  const dataMount = addVolumeMount(mounts, HELPER_DATA_VOLUME_NAME, parentDir);
  const hostParentDir = parentDir;
  parentDir = (dataMount.mountPath ?? '').replace(/\/+$/, '');
  if (parentDir === '' || volumeDir === '' || !parentDir.startsWith('/')) {
    throw fail(
      `invalid path ${action} for ${inputs.path}: cannot find parent dir or volume dir or parent dir is relative`,
    );
  }
  const volDir = `${parentDir}/${volumeDir}`;

  const volumes: V1Volume[] = [
    { name: HELPER_DATA_VOLUME_NAME, hostPath: { path: hostParentDir, type: 'DirectoryOrCreate' } },
  ];
  if (items.length > 0)
    volumes.push({ name: HELPER_SCRIPT_VOLUME_NAME, configMap: { name: inputs.configMapName, items } });

  pod.apiVersion ??= 'v1';
  pod.kind ??= 'Pod';
  metadata.name = `${metadata.name ?? ''}-${action}-${pvName}`.slice(0, HELPER_POD_NAME_MAX_LENGTH);
  metadata.namespace = inputs.namespace;
  if (inputs.labels !== undefined) metadata.labels = { ...metadata.labels, ...inputs.labels };
  if (inputs.annotations !== undefined) metadata.annotations = { ...metadata.annotations, ...inputs.annotations };
  if ((spec.nodeName ?? '') === '' && inputs.node !== '') spec.nodeName = inputs.node;
  spec.serviceAccountName = inputs.serviceAccountName;
  spec.automountServiceAccountToken ??= false;
  spec.restartPolicy = 'Never';
  if (spec.tolerations === undefined) spec.tolerations = [{ ...DEFAULT_HELPER_TOLERATION }];
  spec.volumes = [...(spec.volumes ?? []), ...volumes];

  // A configured command runs as it is: its image may have no shell (upstream's distroless example).
  container.command =
    command !== undefined && command !== ''
      ? [command]
      : guardedCommand(action, ['/bin/sh', `${HELPER_SCRIPT_DIR}/${action === 'create' ? 'setup' : 'teardown'}`]);
  // VOL_BASE is the mounted directory: the guard (and our default scripts) refuse a VOL_DIR through a link below it.
  const script = scriptInterface({ ...inputs, volDir, volBase: parentDir });
  container.args = script.args;
  container.env = [...(container.env ?? []), ...Object.entries(script.env).map(([name, value]) => ({ name, value }))];
  return pod;
}
