// What a package's shipped manifests run: the container of the Deployment, DaemonSet or Pod that uses the image, as a
// kubelet would start it (command, args, environment, mounts), the probe that says it is ready, and the other objects
// the manifests create, which the provisioner reads (its ConfigMap, its StorageClass).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO } from './paths.ts';
import type { PackageImage } from './targets.ts';

/** Why a package's start-up cannot be measured: said in the report instead of a figure. */
export class NotMeasurable extends Error {}

export type Mount =
  | { kind: 'configMap'; mountPath: string; data: Record<string, string> }
  | { kind: 'hostPath'; mountPath: string; path: string }
  | { kind: 'emptyDir'; mountPath: string };

export interface Launch {
  /** The manifest of the workload, relative to the repository. */
  manifest: string;
  /** The manifests' objects but the workload, in their order. */
  objects: Manifest[];
  namespace: string;
  /** The container's `command`, which replaces the image's ENTRYPOINT; undefined: the ENTRYPOINT. */
  command: string[] | undefined;
  args: string[];
  env: Record<string, string>;
  mounts: Mount[];
  /** The readinessProbe's HTTP GET, else the livenessProbe's (`probe` says which). */
  probe: { kind: 'readinessProbe' | 'livenessProbe'; path: string; port: number };
}

interface Container {
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
}
interface Probe {
  httpGet?: { path?: string; port: number | string };
}
interface PodSpec {
  containers?: Container[];
  volumes?: { name: string; configMap?: { name: string }; hostPath?: { path: string }; emptyDir?: object }[];
}
export interface Manifest {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: PodSpec & { template?: { spec?: PodSpec } };
  data?: Record<string, string>;
}

/** The launch of the image's container in the manifests `image.install`; `nodeName` is the node it runs on. */
export function readLaunch(image: PackageImage, nodeName: string): Launch {
  const dir = join(REPO, 'packages', image.name);
  const files = image.install.map((file) => ({ file, objects: readManifests(dir, join(dir, file)) }));
  const found = files
    .flatMap(({ file, objects }) => objects.map((o) => ({ file, o })))
    .find(({ o }) => podSpecOf(o)?.containers?.some((c) => c.image === image.ref));
  const where = image.install.map((f) => join('packages', image.name, f)).join(', ');
  if (found === undefined) throw new NotMeasurable(`no container with image ${image.ref} in ${where}`);
  const workload = found.o;
  const manifest = join('packages', image.name, found.file);
  const pod = podSpecOf(workload);
  const container = pod?.containers?.find((c) => c.image === image.ref);
  if (pod === undefined || container === undefined) throw new NotMeasurable(`${manifest}: no pod spec`);
  const objects = files.flatMap((f) => f.objects).filter((o) => o !== workload);
  const namespace = workload.metadata?.namespace ?? 'default';

  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const field = e.valueFrom?.fieldRef?.fieldPath;
    if (e.value !== undefined) env[e.name] = e.value;
    else if (field === 'spec.nodeName') env[e.name] = nodeName;
    else if (field === 'metadata.namespace') env[e.name] = namespace;
    else throw new NotMeasurable(`${manifest}: env ${e.name} comes from a source other than a value or fieldRef`);
  }

  const configMaps = objects.filter((o) => o.kind === 'ConfigMap');
  const mounts = (container.volumeMounts ?? []).map((m): Mount => {
    const volume = pod.volumes?.find((v) => v.name === m.name);
    if (volume?.configMap !== undefined) {
      const name = volume.configMap.name;
      const configMap = configMaps.find(
        (c) => c.metadata?.name === name && (c.metadata.namespace ?? 'default') === namespace,
      );
      if (configMap === undefined) throw new NotMeasurable(`${manifest}: ConfigMap ${name} is in no manifest`);
      return { kind: 'configMap', mountPath: m.mountPath, data: configMap.data ?? {} };
    }
    if (volume?.hostPath !== undefined) return { kind: 'hostPath', mountPath: m.mountPath, path: volume.hostPath.path };
    if (volume?.emptyDir !== undefined) return { kind: 'emptyDir', mountPath: m.mountPath };
    throw new NotMeasurable(`${manifest}: volume ${m.name} is of a kind not run here`);
  });

  const [kind, probe] =
    container.readinessProbe !== undefined
      ? (['readinessProbe', container.readinessProbe] as const)
      : (['livenessProbe', container.livenessProbe] as const);
  const get = probe?.httpGet;
  if (get === undefined) throw new NotMeasurable(`${manifest}: the container has no HTTP readiness or liveness probe`);
  const port =
    typeof get.port === 'number' ? get.port : container.ports?.find((p) => p.name === get.port)?.containerPort;
  if (port === undefined) throw new NotMeasurable(`${manifest}: the probe's port ${get.port} is not a container port`);

  return {
    manifest,
    objects,
    namespace,
    command: container.command,
    args: container.args ?? [],
    env,
    mounts,
    probe: { kind, path: get.path ?? '/', port },
  };
}

function podSpecOf(o: Manifest): PodSpec | undefined {
  if (o.kind === 'Pod') return o.spec;
  if (o.kind === 'Deployment' || o.kind === 'DaemonSet' || o.kind === 'StatefulSet') return o.spec?.template?.spec;
  return undefined;
}

/** The objects of the YAML files, read with the package's own YAML parser (the repository root has none). */
function readManifests(dir: string, ...files: string[]): Manifest[] {
  const yaml = createRequire(join(dir, 'package.json'))('yaml') as {
    parseAllDocuments(source: string): { toJS(): unknown }[];
  };
  return files.flatMap((file) =>
    yaml
      .parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as Manifest | null)
      .filter((o): o is Manifest => o !== null),
  );
}
