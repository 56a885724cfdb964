/**
 * What the suites of this folder share: local-path installed on real nodes exactly as docs/local-path.md's "Install"
 * section tells users, by running the commands of that section as they are written there (`ctr` on each node, then
 * `kubectl apply -f` of the manifest or `helm install` of the chart, then `kubectl rollout status`), and the user's
 * view of what follows: claims, pods, the Lease, the helper pods and the node's disk.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { CoreV1Event, V1Lease, V1Pod } from '@kubernetes/client-node';
import {
  ObjectReader,
  recordWatch,
  userTools,
  waitFor,
  type Cluster,
  type RecordedEvent,
  type WatchRecorder,
} from '@kprov/testkit';
import { currentTier, describeTiers, WAIT, type TierContext } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify } from 'yaml';
import { LABEL_OPERATION } from '../../src/executor/helper-pod/labels.js';

const exec = promisify(execFile);

/** The repository's root: the docs' commands name paths from there. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** The doc whose install commands the suites run. */
const DOC = path.join(ROOT, 'docs/local-path.md');
/** The provisioner's namespace, in the manifest and in the doc's `helm install`. */
export const NAMESPACE = 'local-path-storage';
/** The Deployment of both routes (the chart's full name for the doc's release name). */
export const DEPLOYMENT = 'local-path-provisioner';
/** The base path of both routes' config.json. */
export const BASE_PATH = '/opt/local-path-provisioner';
/** The node every suite's claims land on. */
export const NODE = 'node-1';

/** How long a rollout may take on a busy machine: image unpacked, probes passed (`kubectl rollout status`). */
const ROLLOUT_TIMEOUT = '240s';
/** How long a pod may take to get Ready or end on a busy machine. */
export const POD_MS = 180_000;
/** How long the provisioner may take to act on a claim or a volume (helper pods included) on a busy machine. */
export const PROVISION_MS = 180_000;

// ---- the doc's commands

/** The shell commands of the doc's "Install" section, each as its words: comments dropped, `\` lines joined. */
function installCommands(): string[][] {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('\n## Install\n');
  if (start < 0) throw new Error(`${DOC} has no "## Install" section`);
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const commands: string[][] = [];
  for (const block of section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const line of (block[1] ?? '').replace(/\\\n/g, ' ').split('\n')) {
      const command = line.replace(/(^|\s)#.*$/, '').trim();
      if (command === '') continue;
      if (/["'`$|;&<>]/.test(command))
        throw new Error(`the install command "${command}" uses shell syntax, which the suites do not run`);
      commands.push(command.split(/\s+/));
    }
  }
  return commands;
}

/** The install commands, sorted by what they do; a command of another kind is an error, so doc and suites agree. */
interface InstallSteps {
  /** `ctr ... images import <archive>`, run on each node. */
  imports: string[][];
  /** `kubectl apply -f <the manifest>`. */
  manifest: string[];
  /** `helm install ...`. */
  chart: string[];
  /** `kubectl ... rollout status ...`. */
  rollout: string[];
}

function installSteps(): InstallSteps {
  const imports: string[][] = [];
  let manifest: string[] | undefined;
  let chart: string[] | undefined;
  let rollout: string[] | undefined;
  for (const command of installCommands()) {
    const [tool, ...args] = command;
    if (tool === 'ctr' && args.includes('import')) imports.push(command);
    // kind loads into kind's nodes; the suites' nodes are not kind's.
    else if (tool === 'kind') continue;
    else if (tool === 'kubectl' && args[0] === 'apply') manifest = command;
    else if (tool === 'helm' && args[0] === 'install') chart = command;
    else if (tool === 'kubectl' && args.includes('rollout')) rollout = command;
    else throw new Error(`the suites do not know the install command "${command.join(' ')}" of ${DOC}`);
  }
  if (manifest === undefined || chart === undefined || rollout === undefined || imports.length === 0)
    throw new Error(`${DOC}'s "Install" section lacks an image import, the manifest, the chart or the rollout wait`);
  return { imports, manifest, chart, rollout };
}

/** The archives the doc's `ctr` commands import, from the repository's root. */
function archivesToImport(): string[] {
  return installSteps().imports.map((c) => path.join(ROOT, c.at(-1) ?? ''));
}

/** A word of a doc command that names a file of the repository, made absolute; others as they are. */
const fromRoot = (word: string): string =>
  !word.startsWith('-') && word.includes('/') && existsSync(path.join(ROOT, word)) ? path.join(ROOT, word) : word;

/**
 * `describeTiers(title, body, { tiers: ['node'] })`, or a skipped suite saying so when an archive the doc imports
 * is missing.
 */
export function describeDeployment(title: string, body: (tier: TierContext) => void): void {
  const missing = archivesToImport().filter((a) => !existsSync(a));
  if (missing.length > 0) {
    describe.skip(`${title} (no ${missing.map((a) => path.relative(ROOT, a)).join(', ')}: \`pnpm images\` builds them)`, () => {
      it('deploys', () => undefined);
    });
    return;
  }
  describeTiers(title, body, { tiers: ['node'] });
}

// ---- an installation

/** How local-path was installed: `kubectl apply -f` of the manifest, or `helm install` of the chart. */
export type Route = 'manifest' | 'chart';

/** What each route names differently. */
const ROUTES: Record<Route, { lease: string; selector: string }> = {
  manifest: { lease: 'rancher.io-local-path', selector: 'app=local-path-provisioner' },
  chart: {
    lease: 'cluster.local-local-path-provisioner',
    selector: 'app.kubernetes.io/name=local-path-provisioner,app.kubernetes.io/instance=local-path-provisioner',
  },
};

/** local-path, installed and Ready. */
export interface Installation {
  readonly route: Route;
  readonly cluster: Cluster;
  readonly read: ObjectReader;
  /** The administrator's kubeconfig file that `kubectl` and `helm` use. */
  readonly kubeconfig: string;
  readonly kubectl: (...args: string[]) => Promise<string>;
  readonly helm: (...args: string[]) => Promise<string>;
  /** The leader election Lease's name (in {@link NAMESPACE}). */
  readonly lease: string;
  /** The label selector of the provisioner's pods. */
  readonly selector: string;
  /** Writes `objects` as one YAML file and runs `kubectl apply -f` on it. */
  apply(file: string, ...objects: object[]): Promise<void>;
  /** Writes `text` to a scratch file and returns its path. */
  scratch(file: string, text: string): Promise<string>;
  /** The provisioner's pods that are not being deleted, by name. */
  provisionerPods(): Promise<V1Pod[]>;
  /** Waits until the Deployment's rollout is complete (the doc's command, with a deadline). */
  rolloutStatus(): Promise<void>;
}

/**
 * Installs local-path on `cluster` with the doc's commands: the images imported on each node with its `ctr`
 * commands (against the node's containerd socket, `/run/containerd/containerd.sock` on the node), then the route's
 * command with `extraArgs` appended, then the doc's `rollout status`. After the test the Deployment is deleted with
 * its pods (the cluster's reset keeps Deployments).
 */
export async function install(
  cluster: Cluster,
  route: Route,
  extraArgs: readonly string[] = [],
): Promise<Installation> {
  const steps = installSteps();
  const tools = await userTools(cluster);
  const tier = currentTier();
  tier.defer(() => tools.close());
  const dir = path.dirname(tools.kubeconfig);
  const run = (command: readonly string[]): Promise<string> => {
    const [tool, ...args] = command.map(fromRoot);
    if (tool === 'kubectl') return tools.kubectl(...args);
    if (tool === 'helm') return tools.helm(...args);
    throw new Error(`cannot run ${command.join(' ')}`);
  };
  for (const node of cluster.nodes) {
    const socket = cluster.onNode(node.name, '/run/containerd/containerd.sock');
    for (const [, ...args] of steps.imports)
      await exec('ctr', ['--address', socket, ...args.map(fromRoot)], { timeout: 300_000 });
  }
  await run([...(route === 'manifest' ? steps.manifest : steps.chart), ...extraArgs]);
  tier.defer(async () => {
    // Foreground: its ReplicaSet and pods go first, so that none of them outlives the test.
    await tools.kubectl(
      'delete',
      'deployment',
      DEPLOYMENT,
      `--namespace=${NAMESPACE}`,
      '--ignore-not-found',
      '--cascade=foreground',
      '--timeout=50s',
    );
  });
  const read = new ObjectReader(cluster.kubeConfig);
  const { lease, selector } = ROUTES[route];
  const rolloutStatus = async (): Promise<void> => {
    await run([...steps.rollout, `--timeout=${ROLLOUT_TIMEOUT}`]);
  };
  await rolloutStatus();
  const scratch = async (file: string, text: string): Promise<string> => {
    const target = path.join(dir, file);
    await writeFile(target, text);
    return target;
  };
  return {
    route,
    cluster,
    read,
    kubeconfig: tools.kubeconfig,
    kubectl: tools.kubectl,
    helm: tools.helm,
    lease,
    selector,
    scratch,
    async apply(file, ...objects) {
      await tools.kubectl('apply', '-f', await scratch(file, objects.map((o) => stringify(o)).join('---\n')));
    },
    async provisionerPods() {
      const listed = JSON.parse(
        await tools.kubectl('get', 'pods', `--namespace=${NAMESPACE}`, `--selector=${selector}`, '-o', 'json'),
      ) as { items: V1Pod[] };
      return listed.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
    },
    rolloutStatus,
  };
}

// ---- claims and pods, as the examples have them

const example = (file: string): Record<string, unknown> =>
  parseYaml(readFileSync(path.join(ROOT, 'packages/local-path/examples', file), 'utf8')) as Record<string, unknown>;

/** examples/pvc.yaml (WaitForFirstConsumer class `local-path`, 128Mi), named `name`. */
export function exampleClaim(name = 'local-path-pvc'): object {
  const claim = example('pvc.yaml') as { metadata: { name: string } };
  claim.metadata.name = name;
  return claim;
}

/**
 * examples/pod.yaml with the busybox every node has in place of nginx, named `name`, using claim `claim`, running
 * `script` (with the volume at /data). `restartPolicy` `Never` for a pod that ends.
 */
export function examplePod(name: string, claim: string, script: string, restartPolicy?: 'Never'): object {
  const pod = example('pod.yaml') as {
    metadata: { name: string };
    spec: {
      restartPolicy?: string;
      containers: { image: string; command?: string[]; ports?: unknown }[];
      volumes: { persistentVolumeClaim: { claimName: string } }[];
    };
  };
  pod.metadata.name = name;
  const container = pod.spec.containers[0]!;
  container.image = 'busybox';
  container.command = ['sh', '-c', script];
  delete container.ports;
  pod.spec.volumes[0]!.persistentVolumeClaim.claimName = claim;
  if (restartPolicy !== undefined) pod.spec.restartPolicy = restartPolicy;
  return pod;
}

/** A shell line that keeps a container running and ends it at once on SIGTERM (busybox `sh` as PID 1 ignores it). */
export const STAY_UP = 'trap "exit 0" TERM; while :; do sleep 1; done';

/** The claim's volume name once it is Bound. */
export async function waitBound(read: ObjectReader, claim: string): Promise<string> {
  return waitFor(
    `claim ${claim} Bound`,
    async () => {
      const c = await read.claim(claim);
      return c?.status?.phase === 'Bound' ? c.spec?.volumeName : undefined;
    },
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );
}

/** Waits until the pod is in `phase`. */
export async function waitPhase(read: ObjectReader, pod: string, phase: string, namespace = 'default'): Promise<void> {
  await waitFor(
    `pod ${namespace}/${pod} ${phase}`,
    async () => ((await read.pod(pod, namespace))?.status?.phase === phase ? true : undefined),
    { timeoutMs: POD_MS, intervalMs: WAIT.interval },
  );
}

/** Where the volume of claim `claim` (namespace `default`) of PV `pv` is on the node, on this machine. */
export function volumeDir(cluster: Cluster, pv: string, claim: string): string {
  return cluster.onNode(NODE, `${BASE_PATH}/${pv}_default_${claim}`);
}

/** The entries of the base path on the node (none when it does not exist). */
export function basePathEntries(cluster: Cluster): string[] {
  const dir = cluster.onNode(NODE, BASE_PATH);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Events about the claim with `reason`. */
export function claimEvents(read: ObjectReader, claim: string, reason: string): Promise<CoreV1Event[]> {
  return read.events({ kind: 'PersistentVolumeClaim', name: claim, reason, namespace: 'default' });
}

// ---- helper pods

/** Records the pods of the provisioner's namespace (helper pods and the provisioner's) for the rest of the test. */
export async function watchNamespacePods(cluster: Cluster): Promise<WatchRecorder<V1Pod>> {
  const watch = await recordWatch<V1Pod>(cluster.kubeConfig, `/api/v1/namespaces/${NAMESPACE}/pods`);
  currentTier().defer(() => watch.stop());
  return watch;
}

/** Whether the recorded pod `name` ran to `Succeeded` and was deleted afterwards. */
export function ranAndWentAway(events: readonly RecordedEvent<V1Pod>[], name: string): boolean {
  const mine = events.filter((e) => e.object.metadata?.name === name);
  const succeeded = mine.findIndex((e) => e.object.status?.phase === 'Succeeded');
  return succeeded >= 0 && mine.slice(succeeded).some((e) => e.type === 'DELETED');
}

/** The helper pods of the provisioner's namespace now. */
export async function helperPodsNow(read: ObjectReader): Promise<string[]> {
  return (await read.pods(NAMESPACE))
    .filter((p) => p.metadata?.labels?.[LABEL_OPERATION] !== undefined || p.metadata?.name?.startsWith('helper-pod'))
    .map((p) => p.metadata?.name ?? '');
}

// ---- the Lease

/** The Lease's record now (`undefined` before the first leader). */
export async function leaseNow(read: ObjectReader, name: string): Promise<V1Lease['spec']> {
  return (await read.leases(NAMESPACE)).find((l) => l.metadata?.name === name)?.spec;
}

/** The pod a Lease holder identity names: the identity is `<hostname>_<uuid>`, and a pod's hostname is its name. */
export const holderPod = (identity: string | undefined): string => (identity ?? '').replace(/_[^_]*$/, '');

/** Waits until a pod for which `wanted` holds leads, and returns its name. */
export async function waitLeader(i: Installation, wanted: (pod: string) => boolean, what: string): Promise<string> {
  return waitFor(
    `the Lease ${i.lease} held by ${what}`,
    async () => {
      const pod = holderPod((await leaseNow(i.read, i.lease))?.holderIdentity);
      if (pod !== '' && wanted(pod)) return pod;
      // Quoted by the timeout's message.
      throw new Error(pod === '' ? 'no holder' : `held by ${pod}`);
    },
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );
}

/** Records the Lease's changes for the rest of the test. */
export async function watchLease(i: Installation): Promise<WatchRecorder<V1Lease>> {
  const watch = await recordWatch<V1Lease>(
    i.cluster.kubeConfig,
    `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`,
    { fieldSelector: `metadata.name=${i.lease}` },
  );
  currentTier().defer(() => watch.stop());
  return watch;
}

/** The holders a recorded Lease went through, one entry per change of holder (`''`: released). */
export function holders(watch: WatchRecorder<V1Lease>): string[] {
  const seen: string[] = [];
  for (const e of watch.events) {
    const holder = e.object.spec?.holderIdentity ?? '';
    if (seen.at(-1) !== holder) seen.push(holder);
  }
  return seen;
}

// ---- the provisioner's log

/** The provisioner's container, in the manifest and the chart. */
const CONTAINER = 'local-path-provisioner';

/**
 * Follows the provisioner's log in each of `pods` with `kubectl logs --follow`, from its last `tailLines` lines, until
 * the pod ends or the test does: what a pod replaced by a rollout printed last, for the message of a failed assertion.
 */
export function followLogs(i: Installation, pods: Iterable<string>, tailLines = 20): (pod: string) => string {
  const text = new Map<string, string>();
  for (const pod of pods) {
    text.set(pod, '');
    const args = ['--kubeconfig', i.kubeconfig, 'logs', '--follow', `--tail=${tailLines}`, `--namespace=${NAMESPACE}`];
    const child = spawn('kubectl', [...args, pod, `--container=${CONTAINER}`], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk: Buffer) => text.set(pod, (text.get(pod) ?? '') + chunk.toString('utf8')));
    currentTier().defer(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    });
  }
  return (pod) => text.get(pod) ?? '';
}

/** klog's error lines (`E1122 04:10:06.123456 ...`) of a log. */
export const errorLines = (log: string): string[] => log.split('\n').filter((l) => /^E\d{4} /.test(l));

// ---- the scenarios both routes pass

/** A `setup` script that fails: two lines of output (one on stderr), exit code 3. */
export const FAILING_SETUP = [
  '#!/bin/sh',
  'echo "setting up $VOL_DIR"',
  'echo "no room for $VOL_SIZE_BYTES bytes" >&2',
  'exit 3',
].join('\n');

/** `kubectl wait --for=condition=Ready pod/<name>`, with a deadline. */
export async function waitReady(i: Installation, pod: string): Promise<void> {
  await i.kubectl('wait', '--for=condition=Ready', `pod/${pod}`, `--timeout=${POD_MS / 1000}s`);
}

/**
 * The scenarios of both routes, on one installation, as a user sees them: the provisioner's pod is Ready through its
 * probes; examples/pvc.yaml waits for its first consumer; a pod writes into the volume, and the file is in the
 * claim's directory on the node, made by a setup helper pod; a new pod for the claim after the first is deleted gets
 * the same PV and finds the data; deleting the claim removes the PV and the directory through a teardown helper pod;
 * and, once `useSetup` has put {@link FAILING_SETUP} into the ConfigMap as a user of the route does, a new claim gets
 * a `ProvisioningFailed` Event quoting the script's output.
 */
export async function coreScenarios(i: Installation, useSetup: (script: string) => Promise<void>): Promise<void> {
  const { cluster, read, kubectl } = i;
  const [provisioner, ...others] = await i.provisionerPods();
  expect(others).toEqual([]);
  expect(provisioner?.spec?.containers[0]?.readinessProbe?.httpGet?.path).toBe('/ready');
  expect(provisioner?.status?.containerStatuses?.[0]).toMatchObject({ ready: true, started: true, restartCount: 0 });
  const pods = await watchNamespacePods(cluster);

  await i.apply('pvc.yaml', exampleClaim());
  await waitFor(
    'the claim waiting for its first consumer',
    async () => ((await claimEvents(read, 'local-path-pvc', 'WaitForFirstConsumer')).length > 0 ? true : undefined),
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );
  expect((await read.claim('local-path-pvc'))?.status?.phase).toBe('Pending');
  const writer = examplePod(
    'volume-test',
    'local-path-pvc',
    `echo local-path-test >> /data/test; cat /data/test; ${STAY_UP}`,
  );
  await i.apply('pod.yaml', writer);
  await waitReady(i, 'volume-test');
  const pv = await waitBound(read, 'local-path-pvc');
  const dir = volumeDir(cluster, pv, 'local-path-pvc');
  expect(readFileSync(path.join(dir, 'test'), 'utf8')).toBe('local-path-test\n');
  expect(statSync(dir).mode & 0o777).toBe(0o777);
  const volume = await read.volume(pv);
  expect(volume?.spec).toMatchObject({
    hostPath: { path: `${BASE_PATH}/${pv}_default_local-path-pvc` },
    nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ values: [NODE] }] }] } },
  });
  await waitFor(
    `helper-pod-create-${pv} Succeeded and deleted`,
    () => (ranAndWentAway(pods.events, `helper-pod-create-${pv}`) ? true : undefined),
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );

  // A new pod for the claim: the same volume, the data still there.
  await kubectl('delete', 'pod', 'volume-test');
  await i.apply('pod.yaml', writer);
  await waitReady(i, 'volume-test');
  expect((await read.claim('local-path-pvc'))?.spec?.volumeName).toBe(pv);
  expect((await read.volume(pv))?.metadata?.uid).toBe(volume?.metadata?.uid);
  await waitFor(
    'the second pod to print the file',
    async () => {
      const log = await kubectl('logs', 'volume-test');
      return log === 'local-path-test\nlocal-path-test\n' ? true : undefined;
    },
    { timeoutMs: POD_MS, intervalMs: WAIT.interval },
  );

  // Deleting the claim removes the volume's directory, through a teardown helper pod.
  await kubectl('delete', 'pod', 'volume-test');
  await kubectl('delete', 'pvc', 'local-path-pvc');
  await waitFor(
    `PV ${pv} and its directory gone`,
    async () => ((await read.volume(pv)) === undefined && !existsSync(dir) ? true : undefined),
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );
  await waitFor(
    `helper-pod-delete-${pv} Succeeded and deleted`,
    () => (ranAndWentAway(pods.events, `helper-pod-delete-${pv}`) ? true : undefined),
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );
  expect(existsSync(cluster.onNode(NODE, BASE_PATH))).toBe(true);
  expect(basePathEntries(cluster)).toEqual([]);

  // A setup script that fails: its output is in the claim's Event.
  await useSetup(FAILING_SETUP);
  await i.apply('broken.yaml', exampleClaim('broken'), examplePod('broken', 'broken', STAY_UP));
  const failed = await waitFor(
    'a ProvisioningFailed Event of claim broken',
    async () => (await claimEvents(read, 'broken', 'ProvisioningFailed'))[0],
    { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
  );
  const uid = (await read.claim('broken'))?.metadata?.uid ?? '';
  expect(failed.type).toBe('Warning');
  expect(failed.message).toContain('exited with code 3');
  // Both lines, as the script wrote them; a real node's log may give the stdout and stderr lines in either order.
  expect((failed.message ?? '').split('last 2 log lines:\n')[1]?.split('\n').sort()).toEqual([
    `no room for ${128 * 1024 * 1024} bytes`,
    `setting up ${BASE_PATH}/pvc-${uid}_default_broken`,
  ]);
  expect((await read.claim('broken'))?.status?.phase).toBe('Pending');
  expect(await read.volume(`pvc-${uid}`)).toBeUndefined();
}
