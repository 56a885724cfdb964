/**
 * Volume setup of the simulated kubelet. The node's root directory stands for the node's filesystem: a hostPath
 * (or a PV's `hostPath`/`local` path) `P` is `<root>/P`; pod-private volumes live where the kubelet keeps them,
 * under `<root>/var/lib/kubelet/pods/<uid>/`. configMap and secret volumes are written out per container (their
 * text content goes through that container's path mapping, see `paths.ts`).
 */
import { chmod, mkdir, stat, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import {
  viewOpt,
  type DownwardAPIFile,
  type KeyToPath,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type Volume,
} from '../types.js';
import type { KubeletCluster } from './cluster.js';
import type { PathMapper } from './paths.js';
import { podMetadataField } from './fields.js';
import { removeTree } from './remove.js';

/** A volume that is not ready to be set up yet (or cannot be); the message is the kubelet's mount error. */
export class VolumeError extends Error {
  override readonly name = 'VolumeError';
}

/** A file of a configMap or secret volume. */
export interface ProjectedFile {
  /** Relative path inside the volume. */
  path: string;
  content: Buffer;
  mode: number;
}

/** The kubelet's plugin directory names of volumes whose files it writes out. */
export type ProjectedType = 'configmap' | 'secret' | 'downward-api' | 'projected';

/** A volume ready to be mounted: a host directory (or file), or content to write out per container. */
export type ResolvedVolume =
  { kind: 'host'; hostPath: string } | { kind: 'projected'; type: ProjectedType; files: ProjectedFile[] };

/** What volume setup needs besides the cluster and the pod. */
export interface VolumeContext {
  /** Node root directory. */
  root: string;
  /** Content of `serviceAccountToken` projections. */
  serviceAccountToken: string;
}

/** `<root>/P` for a node-absolute path `P`; `..` cannot climb out of the root. */
export function onNode(root: string, p: string): string {
  return path.join(root, path.posix.resolve('/', p));
}

/** The kubelet's directory of a pod on a node. */
export function podDir(root: string, uid: string): string {
  return path.join(root, 'var', 'lib', 'kubelet', 'pods', uid);
}

/** `stat`, or `undefined` when nothing is there (as `statSync` with `throwIfNoEntry: false`). */
async function statOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await stat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function checkHostPath(hostPath: string, shown: string, type: string | undefined): Promise<void> {
  const info = await statOrUndefined(hostPath);
  switch (type ?? '') {
    case '':
    case 'DirectoryOrCreate':
      if (info === undefined) await mkdir(hostPath, { recursive: true, mode: 0o755 });
      return;
    case 'Directory':
      if (info?.isDirectory() !== true)
        throw new VolumeError(`hostPath type check failed: ${shown} is not a directory`);
      return;
    case 'FileOrCreate':
      if (info === undefined) {
        await mkdir(path.dirname(hostPath), { recursive: true, mode: 0o755 });
        await writeFile(hostPath, '', { mode: 0o644 });
      } else if (!info.isFile()) throw new VolumeError(`hostPath type check failed: ${shown} is not a file`);
      return;
    case 'File':
      if (info?.isFile() !== true) throw new VolumeError(`hostPath type check failed: ${shown} is not a file`);
      return;
    case 'Socket':
      if (info?.isSocket() !== true) throw new VolumeError(`hostPath type check failed: ${shown} is not a socket file`);
      return;
    case 'CharDevice':
      if (info?.isCharacterDevice() !== true)
        throw new VolumeError(`hostPath type check failed: ${shown} is not a character device`);
      return;
    case 'BlockDevice':
      if (info?.isBlockDevice() !== true)
        throw new VolumeError(`hostPath type check failed: ${shown} is not a block device`);
      return;
    default:
      throw new VolumeError(`hostPath type check failed: unknown type ${type ?? ''} for ${shown}`);
  }
}

function pickFiles(
  data: Map<string, Buffer>,
  items: KeyToPath[] | undefined,
  defaultMode: number | undefined,
  optional: boolean,
  what: 'configmap' | 'secret',
): ProjectedFile[] {
  const mode = defaultMode ?? 0o644;
  if (items === undefined || items.length === 0)
    return [...data.entries()].map(([key, content]) => ({ path: key, content, mode }));
  const files: ProjectedFile[] = [];
  for (const item of items) {
    const content = data.get(item.key);
    if (content === undefined) {
      if (optional) continue;
      throw new VolumeError(
        what === 'configmap'
          ? `configmap references non-existent config key: ${item.key}`
          : `secret references non-existent secret key: ${item.key}`,
      );
    }
    files.push({ path: item.path, content, mode: item.mode ?? mode });
  }
  return files;
}

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A ConfigMap's `data` and `binaryData`, or a Secret's `data` (base64) and `stringData`, as bytes per key. */
export function objectData(
  cluster: KubeletCluster,
  kind: 'configmaps' | 'secrets',
  namespace: string,
  name: string,
): Map<string, Buffer> | undefined {
  const obj = cluster.get(kind, namespace, name);
  if (obj === undefined) return undefined;
  const out = new Map<string, Buffer>();
  if (kind === 'configmaps') {
    for (const [k, v] of Object.entries(stringMap(obj.data))) out.set(k, Buffer.from(v, 'utf8'));
    for (const [k, v] of Object.entries(stringMap(obj.binaryData))) out.set(k, Buffer.from(v, 'base64'));
  } else {
    for (const [k, v] of Object.entries(stringMap(obj.data))) out.set(k, Buffer.from(v, 'base64'));
    for (const [k, v] of Object.entries(stringMap(obj.stringData))) out.set(k, Buffer.from(v, 'utf8'));
  }
  return out;
}

async function claimVolume(
  cluster: KubeletCluster,
  root: string,
  namespace: string,
  claimName: string,
): Promise<string> {
  const pvc = viewOpt<PersistentVolumeClaim>(cluster.get('persistentvolumeclaims', namespace, claimName));
  if (pvc === undefined) throw new VolumeError(`persistentvolumeclaim "${claimName}" not found`);
  const volumeName = pvc.spec?.volumeName ?? '';
  const phase = pvc.status?.phase ?? '';
  if (volumeName === '' || phase !== 'Bound') {
    throw new VolumeError(
      `PVC ${namespace}/${claimName} has non-bound phase ("${phase}") or empty pvc.Spec.VolumeName ("${volumeName}")`,
    );
  }
  const pv = viewOpt<PersistentVolume>(cluster.get('persistentvolumes', undefined, volumeName));
  if (pv === undefined) throw new VolumeError(`persistentvolume "${volumeName}" not found`);
  if (pv.spec?.hostPath !== undefined) {
    const hostPath = onNode(root, pv.spec.hostPath.path);
    await checkHostPath(hostPath, pv.spec.hostPath.path, pv.spec.hostPath.type);
    return hostPath;
  }
  if (pv.spec?.local !== undefined) {
    const hostPath = onNode(root, pv.spec.local.path);
    if ((await statOrUndefined(hostPath)) === undefined)
      throw new VolumeError(`path "${pv.spec.local.path}" does not exist`);
    return hostPath;
  }
  throw new VolumeError(
    `persistentvolume "${volumeName}": only hostPath and local volumes can be mounted by the simulated kubelet`,
  );
}

/** A downward API file's content (`metadata.labels` and `metadata.annotations` as sorted `key="value"` lines). */
function downwardValue(pod: Pod, file: DownwardAPIFile): string {
  const fieldPath = file.fieldRef?.fieldPath;
  if (fieldPath === undefined) return ''; // resourceFieldRef: no resource accounting in the simulation.
  const lines = (m: Record<string, string> | undefined): string =>
    Object.keys(m ?? {})
      .sort()
      .map((k) => `${k}=${JSON.stringify(m?.[k] ?? '')}`)
      .join('\n');
  const meta = podMetadataField(pod, fieldPath);
  if (meta !== undefined) return meta;
  switch (fieldPath) {
    case 'metadata.labels':
      return lines(pod.metadata.labels);
    case 'metadata.annotations':
      return lines(pod.metadata.annotations);
    default:
      throw new VolumeError(`unsupported downward API fieldPath: ${fieldPath}`);
  }
}

function downwardFiles(
  pod: Pod,
  items: DownwardAPIFile[] | undefined,
  defaultMode: number | undefined,
): ProjectedFile[] {
  return (items ?? []).map((f) => ({
    path: f.path,
    content: Buffer.from(downwardValue(pod, f), 'utf8'),
    mode: f.mode ?? defaultMode ?? 0o644,
  }));
}

function keyedFiles(
  cluster: KubeletCluster,
  kind: 'configmaps' | 'secrets',
  namespace: string,
  src: { name?: string; items?: KeyToPath[]; optional?: boolean },
  defaultMode: number | undefined,
): ProjectedFile[] {
  const data = objectData(cluster, kind, namespace, src.name ?? '');
  const label = kind === 'configmaps' ? 'configmap' : 'secret';
  if (data === undefined && src.optional !== true) throw new VolumeError(`${label} "${src.name ?? ''}" not found`);
  return pickFiles(data ?? new Map<string, Buffer>(), src.items, defaultMode, src.optional === true, label);
}

/** The ConfigMap OpenShift's kube-apiserver adds to every `kube-api-access-*` volume, filled by its service-ca operator. */
const OPENSHIFT_SERVICE_CA = 'openshift-service-ca.crt';

/**
 * A projected ConfigMap source, made optional when it is the {@link OPENSHIFT_SERVICE_CA} source of a service account
 * token volume. OpenShift's build of kube-apiserver adds that source to every such volume; without OpenShift's
 * service-ca operator (as with those binaries in a bare control plane) nothing creates or fills the ConfigMap, and a
 * real kubelet would keep every pod in ContainerCreating.
 */
function serviceCaOptional<T extends { name?: string; optional?: boolean }>(volumeName: string, src: T): T {
  return src.name === OPENSHIFT_SERVICE_CA && volumeName.startsWith('kube-api-access-')
    ? { ...src, optional: true }
    : src;
}

/**
 * Sets up a pod's volumes on a node: creates hostPath (per type), emptyDir and PV directories, reads configMaps,
 * secrets, downward API fields and projections. Throws {@link VolumeError} when a volume is not ready (claim not
 * bound, object missing, type check).
 */
export async function resolveVolumes(
  cluster: KubeletCluster,
  pod: Pod,
  ctx: VolumeContext,
): Promise<Map<string, ResolvedVolume>> {
  const out = new Map<string, ResolvedVolume>();
  // One volume after the other, in the pod's order, so that a failure leaves the same volumes set up as before.
  for (const v of pod.spec?.volumes ?? []) out.set(v.name, await resolveVolume(cluster, pod, v, ctx));
  return out;
}

async function resolveVolume(
  cluster: KubeletCluster,
  pod: Pod,
  v: Volume,
  ctx: VolumeContext,
): Promise<ResolvedVolume> {
  const namespace = pod.metadata.namespace ?? '';
  const root = ctx.root;
  const dir = podDir(root, pod.metadata.uid ?? '');
  if (v.hostPath !== undefined) {
    const hostPath = onNode(root, v.hostPath.path);
    await checkHostPath(hostPath, v.hostPath.path, v.hostPath.type);
    return { kind: 'host', hostPath };
  }
  if (v.emptyDir !== undefined) {
    const hostPath = path.join(dir, 'volumes', 'kubernetes.io~empty-dir', v.name);
    await mkdir(hostPath, { recursive: true, mode: 0o777 });
    return { kind: 'host', hostPath };
  }
  if (v.persistentVolumeClaim !== undefined)
    return { kind: 'host', hostPath: await claimVolume(cluster, root, namespace, v.persistentVolumeClaim.claimName) };
  if (v.configMap !== undefined) {
    return {
      kind: 'projected',
      type: 'configmap',
      files: keyedFiles(cluster, 'configmaps', namespace, v.configMap, v.configMap.defaultMode),
    };
  }
  if (v.secret !== undefined) {
    const s = v.secret;
    const src = {
      name: s.secretName ?? '',
      ...(s.items === undefined ? {} : { items: s.items }),
      ...(s.optional === undefined ? {} : { optional: s.optional }),
    };
    return { kind: 'projected', type: 'secret', files: keyedFiles(cluster, 'secrets', namespace, src, s.defaultMode) };
  }
  if (v.downwardAPI !== undefined)
    return {
      kind: 'projected',
      type: 'downward-api',
      files: downwardFiles(pod, v.downwardAPI.items, v.downwardAPI.defaultMode),
    };
  if (v.projected !== undefined) {
    const mode = v.projected.defaultMode;
    const files: ProjectedFile[] = [];
    for (const src of v.projected.sources ?? []) {
      if (src.configMap !== undefined)
        files.push(...keyedFiles(cluster, 'configmaps', namespace, serviceCaOptional(v.name, src.configMap), mode));
      else if (src.secret !== undefined) files.push(...keyedFiles(cluster, 'secrets', namespace, src.secret, mode));
      else if (src.downwardAPI !== undefined) files.push(...downwardFiles(pod, src.downwardAPI.items, mode));
      else if (src.serviceAccountToken !== undefined) {
        files.push({
          path: src.serviceAccountToken.path,
          content: Buffer.from(ctx.serviceAccountToken, 'utf8'),
          mode: mode ?? 0o644,
        });
      } else throw new VolumeError(`volume "${v.name}": unsupported projection ${Object.keys(src).join(', ')}`);
    }
    return { kind: 'projected', type: 'projected', files };
  }
  throw new VolumeError(
    `volume "${v.name}": only hostPath, emptyDir, persistentVolumeClaim, configMap, secret, downwardAPI and projected volumes are supported by the simulated kubelet`,
  );
}

/** Whether bytes are UTF-8 text without NUL bytes, i.e. safe to rewrite. */
function isText(content: Buffer): boolean {
  if (content.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(content);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes a configMap/secret/downwardAPI/projected volume's files into `dir` (emptied first), text rewritten by
 * `mapper`. Files are written concurrently (each file's own steps in order); when two items name the same path the
 * last one wins, as if written one after the other.
 */
export async function writeProjected(dir: string, files: readonly ProjectedFile[], mapper: PathMapper): Promise<void> {
  await removeTree(dir);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const byTarget = new Map<string, ProjectedFile>();
  for (const f of files) byTarget.set(path.join(dir, path.posix.normalize(f.path)), f);
  await Promise.all([...byTarget].map(async ([target, f]) => writeOne(dir, target, f, mapper)));
}

async function writeOne(dir: string, target: string, f: ProjectedFile, mapper: PathMapper): Promise<void> {
  const parent = path.dirname(target);
  if (parent !== dir) await mkdir(parent, { recursive: true, mode: 0o755 });
  const content = isText(f.content) ? Buffer.from(mapper.rewrite(f.content.toString('utf8')), 'utf8') : f.content;
  await writeFile(target, content, { mode: f.mode });
  // The mode given at creation is masked by the umask; the volume's mode is not.
  await chmod(target, f.mode);
}
