/**
 * local-static installed on a real node as docs/local-static.md tells users to install it: the image imported into
 * the node's containerd (`ctr -n k8s.io images import`, for a cluster that cannot pull it), then `kubectl apply -f` of
 * deploy/ or `helm install` of the chart, with the doc's own command lines ({@link INSTALL}), which the suites also
 * find in the doc. Disks are made on this machine under the node's filesystem after the provisioner started (a tmpfs,
 * a loop device), and reach its pod by mount propagation, as a disk mounted on a node does.
 */
import { execFile } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  imageArchiveProblem,
  ObjectReader,
  terminatePod,
  userTools,
  waitFor,
  type Cluster,
  type TerminatedContainer,
  type UserTools,
} from '@kprov/testkit';
import type { TierContext } from '@kprov/testkit/vitest';
import { CoreV1Api, type V1PersistentVolume, type V1Pod } from '@kubernetes/client-node';
import packageJson from '../../package.json' with { type: 'json' };
import { Mounts, NO_LOOP_REASON } from '../mounts.js';

const exec = promisify(execFile);

/** The repository's root: the doc's commands run from there. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The image's archive, as `pnpm images` writes it. */
export const ARCHIVE = path.join(ROOT, 'images', 'local-static.oci.tar');
/** The image the manifests and the chart run. */
export const IMAGE = `ghcr.io/kprov/local-static:${packageJson.version}`;
/**
 * Why the suites cannot run here, or `undefined`: no image archive, or one of another version, or no loop devices
 * (the suites' block devices).
 */
export const CANNOT_RUN = imageArchiveProblem(ARCHIVE, IMAGE) ?? NO_LOOP_REASON;

/** The doc the users follow. */
export const DOC = path.join(ROOT, 'docs', 'local-static.md');

/** The command lines of docs/local-static.md the suites run, word for word (from the repository's root). */
export const INSTALL = {
  /** Gives a node that cannot pull the image the archive. */
  importImage: 'ctr -n k8s.io images import images/local-static.oci.tar',
  /** The manifests. */
  apply: 'kubectl apply -f packages/local-static/deploy/',
  /** The chart, with a Block class besides its default Filesystem one. */
  helmBlock:
    'helm install local-static packages/local-static/deploy/chart/local-static-provisioner -n kube-system -f packages/local-static/deploy/examples/block-values.yaml',
} as const;

/** The discovery directories, as the manifests and the block example configure them. */
export const FAST_DISKS = '/mnt/fast-disks';
export const BLOCK_DISKS = '/mnt/block-disks';

/** How long the provisioner's pod may take to get Ready on a busy machine: image unpacked, first pass, probe. */
export const READY_MS = 240_000;
/** How long a disk may take to be published: a pass every 10 s (`--discovery-period`), a busy machine. */
export const DISCOVERY_MS = 120_000;
/** How long a consumer pod may take to run and finish on a real node. */
export const POD_MS = 120_000;
/** How long a released volume may take to be cleaned and published again: two passes and the cleaner. */
export const RECYCLE_MS = 180_000;
/** The time limit of a test: node start, image import, install, and several of the steps above. */
export const TEST_MS = 600_000;

/** What the doc's steps gave a test. */
export interface Installed {
  cluster: Cluster;
  tools: UserTools;
  core: CoreV1Api;
  read: ObjectReader;
  /** The disks of the test, unmounted and detached after it. */
  mounts: Mounts;
  /** Runs one command line of {@link INSTALL} as the doc has it, from the repository's root. */
  run(command: string): Promise<string>;
}

/** Arguments of a doc's command with the repository's paths made absolute (the suite may run from anywhere). */
function fromRoot(args: readonly string[]): string[] {
  return args.map((a) => (/^(packages|images)\//.test(a) ? path.join(ROOT, a) : a));
}

/**
 * A cluster of one real node, `node-1`, prepared as the doc says: the image imported into its containerd with the
 * doc's `ctr` command (the discovery directories need not exist: the pod's runtime makes a missing one). Everything
 * is undone after the test.
 */
export async function prepareNode(tier: TierContext): Promise<Installed> {
  const cluster = await tier.start({ nodes: [{ name: 'node-1' }] });
  const tools = await userTools(cluster);
  tier.defer(() => tools.close());
  const mounts = new Mounts();
  // Deferred calls run before the node stops.
  tier.defer(() => mounts.cleanup());
  const run = async (command: string): Promise<string> => {
    const [tool, ...args] = command.split(' ');
    switch (tool) {
      case 'kubectl':
        return tools.kubectl(...fromRoot(args));
      case 'helm':
        return tools.helm(...fromRoot(args));
      case 'ctr': {
        // On the node, ctr's default address is its containerd's socket: here, that socket's path on this machine.
        const socket = cluster.onNode('node-1', '/run/containerd/containerd.sock');
        return (await exec('ctr', ['--address', socket, ...fromRoot(args)], { timeout: 300_000 })).stdout;
      }
      case undefined:
      default:
        throw new Error(`no way to run ${command}`);
    }
  };
  const installed: Installed = {
    cluster,
    tools,
    core: cluster.kubeConfig.makeApiClient(CoreV1Api),
    read: new ObjectReader(cluster.kubeConfig),
    mounts,
    run,
  };
  await run(INSTALL.importImage);
  return installed;
}

/**
 * Waits, as a user does (`kubectl rollout status`), until the DaemonSet's pod on the node is Ready through its
 * probes, and returns the pod's name.
 */
export async function waitProvisionerReady(i: Installed, daemonSet: string): Promise<string> {
  await i.tools.kubectl(
    'rollout',
    'status',
    '--namespace=kube-system',
    `daemonset/${daemonSet}`,
    `--timeout=${READY_MS / 1000}s`,
  );
  const pods = await i.core.listNamespacedPod({ namespace: 'kube-system' });
  const pod = pods.items.find(
    (p) =>
      p.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet' && o.name === daemonSet) === true &&
      p.metadata.deletionTimestamp === undefined,
  );
  if (pod?.metadata?.name === undefined) throw new Error(`no pod of daemonset ${daemonSet}`);
  return pod.metadata.name;
}

/** Waits for an Available PV whose local path is `hostPath`, other than those of `notUids`. */
export async function waitAvailableVolume(
  i: Installed,
  hostPath: string,
  notUids: readonly string[] = [],
  timeoutMs = DISCOVERY_MS,
): Promise<V1PersistentVolume> {
  return waitFor(
    `an Available PV for ${hostPath}`,
    async () =>
      (await i.read.volumes()).find(
        (pv) =>
          pv.spec?.local?.path === hostPath &&
          pv.status?.phase === 'Available' &&
          !notUids.includes(pv.metadata?.uid ?? ''),
      ),
    { timeoutMs, intervalMs: 500 },
  );
}

/** What a claim asks for besides its class. */
export interface ClaimOptions {
  /** A raw block volume. Default a filesystem. */
  block?: boolean;
  /** Its storage request: the binder gives it the smallest Available PV at least as large. Default `1Mi`. */
  storage?: string;
}

/** A claim of `className` for any volume of it (WaitForFirstConsumer binds it when its pod is scheduled). */
export async function createClaim(
  i: Installed,
  name: string,
  className: string,
  options: ClaimOptions = {},
): Promise<void> {
  await i.core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: className,
        ...(options.block === true ? { volumeMode: 'Block' } : {}),
        resources: { requests: { storage: options.storage ?? '1Mi' } },
      },
    },
  });
}

/**
 * A busybox pod running `script` once with claim `claim`: mounted at /data, or, for a Block claim, as the device
 * /dev/xvda. The node has busybox from an archive and no registry: `IfNotPresent`.
 */
export function consumerPod(name: string, claim: string, script: string, block = false): V1Pod {
  return {
    metadata: { name },
    spec: {
      restartPolicy: 'Never',
      containers: [
        {
          name: 'main',
          image: 'busybox',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          ...(block
            ? { volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }] }
            : { volumeMounts: [{ name: 'data', mountPath: '/data' }] }),
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
    },
  };
}

/** Runs `pod` to its end; resolves with its phase and log. */
export async function runPod(i: Installed, pod: V1Pod): Promise<{ phase: string; log: string }> {
  const name = pod.metadata?.name ?? '';
  await i.core.createNamespacedPod({ namespace: 'default', body: pod });
  const phase = await waitFor(
    `pod ${name} finished`,
    async () => {
      const p = await i.read.pod(name);
      return p?.status?.phase === 'Succeeded' || p?.status?.phase === 'Failed' ? p.status.phase : undefined;
    },
    { timeoutMs: POD_MS, intervalMs: 500 },
  );
  const log = await i.tools.kubectl('logs', name);
  return { phase, log };
}

/** The first `length` bytes of a block device, read on this machine. */
export function deviceHead(device: string, length: number): Buffer {
  const fd = openSync(device, 'r');
  try {
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, 0);
    return buffer;
  } finally {
    closeSync(fd);
  }
}

/**
 * Waits until nothing on the machine holds `device` mounted (an exclusive open succeeds): the kubelet unmounts a
 * formatted volume's device shortly after the pod that used it is gone.
 */
export async function waitDeviceFree(device: string): Promise<void> {
  await waitFor(
    `${device} no longer mounted`,
    () => {
      closeSync(openSync(device, constants.O_RDONLY | constants.O_EXCL));
      return true;
    },
    { timeoutMs: POD_MS, intervalMs: 200 },
  );
}

/** Deletes a pod as `kubectl delete pod` does, and waits until it is gone (its volumes unmounted). */
export async function deletePod(i: Installed, pod: string): Promise<void> {
  await i.tools.kubectl('delete', 'pod', pod, '--wait=true');
}

/** Releases a volume as a user does, deleting its claim; resolves once the PV `pvName` is no longer Bound. */
export async function releaseClaim(i: Installed, claim: string, pvName: string): Promise<void> {
  await i.tools.kubectl('delete', 'pvc', claim, '--wait=true');
  await waitFor(
    `PV ${pvName} released`,
    async () => ((await i.read.volume(pvName))?.status?.phase === 'Bound' ? undefined : true),
    { timeoutMs: POD_MS, intervalMs: 500 },
  );
}

/**
 * Stops the provisioner's pod as `kubectl delete pod` does (SIGTERM, its grace period) and returns how its container
 * ended and the lines it logged from the stop signal on.
 */
export async function stopProvisioner(
  i: Installed,
  pod: string,
): Promise<{ container: TerminatedContainer; afterSignal: string[] }> {
  const [container] = await terminatePod(i.cluster.kubeConfig, 'kube-system', pod);
  if (container === undefined) throw new Error(`pod ${pod} had no container`);
  const lines = container.log.split('\n').filter((l) => l !== '');
  const from = lines.findIndex((l) => l.includes('Received signal'));
  return { container, afterSignal: from < 0 ? lines : lines.slice(from) };
}

/** The arguments of each `kubectl` command of the NOTES that `helm install` printed. */
export function notesCommands(helmOutput: string): string[][] {
  const notes = helmOutput.slice(helmOutput.indexOf('NOTES:'));
  return [...notes.matchAll(/^\s+kubectl (.+)$/gm)].map((m) => m[1]!.trim().split(/\s+/));
}

/**
 * The command lines of the doc's `sh` blocks: a line continued with a backslash joined to the next, a trailing
 * comment removed.
 */
export function docCommands(): string[] {
  const blocks = readFileSync(DOC, 'utf8').match(/^```sh\n[\s\S]*?^```$/gm) ?? [];
  return blocks.flatMap((block) =>
    block
      .split('\n')
      .slice(1, -1)
      .join('\n')
      .replace(/\s*\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}
