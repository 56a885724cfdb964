/**
 * startNode: a real kubelet and containerd joined to a real control plane run pods in real containers, reach the
 * API server from a pod, serve logs and exec through kube-apiserver, and leave nothing behind, whether stopped or
 * killed. Runs where the node tier can (root, KUBEBUILDER_ASSETS with kubelet and pause, Debian's containerd, runc,
 * CNI plugins, buildah, busybox-static); elsewhere the run's one line says what is missing.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../src/control-plane/control-plane.js';
import { cgroupMounts } from '../../src/node/cgroups.js';
import { busyboxImage } from '../../src/node/images.js';
import { startNode } from '../../src/node/node.js';
import { nodesDir } from '../../src/node/slot.js';
import { waitFor } from '../../src/process/wait-for.js';
import { terminatePod } from '../../src/tiers/terminate-pod.js';
import { availableTiers } from '../../src/tiers/tiers.js';
import { hostPathPod } from '../hollow-node/helpers.js';

const exec = promisify(execFile);
/** A node takes seconds to start on an idle machine; a busy one can take ten times that. */
const NODE_START_MS = 180_000;
/** How long a pod may take to reach a phase on a real node (image unpacked, sandbox, container). */
const POD_MS = 120_000;

/** Every trace of a node on this machine: what stop() must remove. */
function traces(node: { root: string }): string[] {
  const dir = path.dirname(node.root);
  const slot = path.basename(dir);
  const found: string[] = [];
  if (existsSync(dir)) found.push(`folder ${dir}`);
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n'))
    if (line.split(' ')[4]?.startsWith(dir)) found.push(`mount ${line.split(' ')[4]}`);
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes(dir)) found.push(`process ${pid} ${cmdline.replace(/\0/g, ' ').slice(0, 80)}`);
  }
  if (existsSync(`/sys/class/net/kprov${slot}`)) found.push(`interface kprov${slot}`);
  for (const mount of cgroupMounts())
    if (existsSync(path.join(mount, `kprov-node-${slot}`))) found.push(`cgroup ${mount}/kprov-node-${slot}`);
  return found;
}

async function iptablesRules(): Promise<string> {
  return (await exec('iptables', ['-w', '-t', 'nat', '-S', 'PREROUTING'])).stdout;
}

describe.skipIf(!availableTiers().includes('node'))('startNode', () => {
  let cp: ControlPlane;
  let busybox: string;

  beforeAll(async () => {
    cp = await startControlPlane({ controllers: '*' });
    busybox = await busyboxImage();
  }, NODE_START_MS);
  afterAll(async () => cp?.stop(), 60_000);

  const kubectl = async (...args: string[]): Promise<string> =>
    (await exec('kubectl', ['--kubeconfig', cp.kubeconfigPath, ...args], { timeout: POD_MS })).stdout;

  it(
    'runs a pod in a real container that writes through a hostPath and talks to the API server; logs and exec work',
    async () => {
      const node = await startNode({ controlPlane: cp, name: 'node-1', images: [busybox] });
      try {
        const core = cp.kubeConfig.makeApiClient(CoreV1Api);
        // The pod reaches the API server as a client in a pod does: the `kubernetes` Service's ClusterIP, from
        // its environment, with the service account token; busybox has no TLS client, so it asks over plain TCP
        // and gets the TLS server's answer to plain HTTP.
        const script = [
          'echo "written in a container" > /data/file',
          'printf "GET /version HTTP/1.0\\r\\n\\r\\n" | nc "$KUBERNETES_SERVICE_HOST" "$KUBERNETES_SERVICE_PORT" | head -n 1',
          'cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo',
          'sleep 3600',
        ].join('; ');
        await core.createNamespacedPod({ namespace: 'default', body: hostPathPod('writer', script) });
        await waitFor(
          'pod writer Running',
          async () =>
            (await core.readNamespacedPod({ namespace: 'default', name: 'writer' })).status?.phase === 'Running'
              ? true
              : undefined,
          { timeoutMs: POD_MS },
        );
        await waitFor('the file on the node', () =>
          existsSync(node.onNode('/var/kprov-test/file')) ? true : undefined,
        );
        expect(readFileSync(node.onNode('/var/kprov-test/file'), 'utf8')).toBe('written in a container\n');
        // The node's filesystem is its own: the machine's /var has no such folder.
        expect(existsSync('/var/kprov-test')).toBe(false);
        const logs = await waitFor('the pod log', async () => {
          const text = await kubectl('logs', 'writer');
          return text.includes('default') ? text : undefined;
        });
        expect(logs).toContain('HTTP/1.0 400 Bad Request');
        expect(await kubectl('exec', 'writer', '--', 'cat', '/data/file')).toBe('written in a container\n');
        await kubectl('delete', 'pod', 'writer', '--wait=true', '--grace-period=1');
      } finally {
        await node.stop();
      }
      expect(traces(node)).toEqual([]);
      expect(await iptablesRules()).not.toContain(`kprov-node-${path.basename(path.dirname(node.root))}`);
    },
    NODE_START_MS + 2 * POD_MS,
  );

  it(
    'terminatePod: a container that handles SIGTERM exits 0 with its last words; one that ignores it is killed',
    async () => {
      const node = await startNode({ controlPlane: cp, name: 'node-1', images: [busybox] });
      try {
        const core = cp.kubeConfig.makeApiClient(CoreV1Api);
        const pod = (name: string, script: string): V1Pod => ({
          ...hostPathPod(name, script),
          spec: { ...hostPathPod(name, script).spec!, terminationGracePeriodSeconds: 3 },
        });
        await core.createNamespacedPod({
          namespace: 'default',
          body: pod('polite', "trap 'echo stopping; exit 0' TERM; echo started; while :; do sleep 0.2; done"),
        });
        await core.createNamespacedPod({
          namespace: 'default',
          body: pod('deaf', "trap '' TERM; echo started; while :; do sleep 0.2; done"),
        });
        for (const name of ['polite', 'deaf'])
          await waitFor(
            `pod ${name} Running`,
            async () =>
              (await core.readNamespacedPod({ namespace: 'default', name })).status?.phase === 'Running'
                ? true
                : undefined,
            { timeoutMs: POD_MS },
          );
        const [polite] = await terminatePod(cp.kubeConfig, 'default', 'polite');
        expect(polite).toEqual({ name: 'c', exitCode: 0, log: 'started\nstopping\n' });
        const [deaf] = await terminatePod(cp.kubeConfig, 'default', 'deaf');
        expect(deaf).toMatchObject({ name: 'c', exitCode: 137, log: 'started\n' });
      } finally {
        await node.stop();
      }
    },
    NODE_START_MS + 2 * POD_MS,
  );

  it(
    'kprov-testkit node joins a cluster from its kubeconfig, prints each step with its time, and stops on SIGTERM',
    async () => {
      const kubeconfig = await cp.writeKubeconfig(path.join(cp.dataDir, 'cli.kubeconfig'));
      const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
      const child = spawn(process.execPath, [cli, 'node', '--kubeconfig', kubeconfig, '--name', 'cli-node'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const lines: string[] = [];
      createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const ready = await waitFor(
        'kprov-testkit node ready',
        () => {
          if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${stderr}`);
          return lines.find((l) => l.includes('node cli-node ready in'));
        },
        { timeoutMs: NODE_START_MS },
      );
      for (const step of ['pause image ready', 'containerd started', 'images loaded', 'node cli-node Ready'])
        expect(
          lines.some((l) => l.startsWith('kprov-testkit: ') && l.includes(step) && / \(\d+\.\d s\)$/.test(l)),
        ).toBe(true);
      const root = /filesystem (\S+)$/.exec(ready)?.[1] ?? '';
      const node = await cp.kubeConfig.makeApiClient(CoreV1Api).readNode({ name: 'cli-node' });
      expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(traces({ root })).toEqual([]);
    },
    NODE_START_MS,
  );

  it(
    'cleans up, at the next start, what a node of a killed process left',
    async () => {
      // A process that starts a node and is killed (SIGKILL: no stop(), no exit handler) once it is up.
      await cp.writeKubeconfig(path.join(cp.dataDir, 'victim.kubeconfig'));
      const program = [
        // The built package (`pnpm test` builds first).
        `import { startNode } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};`,
        `const node = await startNode({ kubeconfig: ${JSON.stringify(path.join(cp.dataDir, 'victim.kubeconfig'))}, name: 'victim' });`,
        'console.log(node.root);',
        'setInterval(() => {}, 1000);',
      ].join('\n');
      const child = spawn(process.execPath, ['--input-type=module', '-e', program], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const root = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
        child.once('exit', (code) => reject(new Error(`the node's process exited with ${code}`)));
      });
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const victim = { root };
      // What it leaves: its folder, mount, bridge and cgroups (its processes end with their input).
      expect(traces(victim)).toEqual(expect.arrayContaining([`folder ${path.dirname(root)}`]));

      const next = await startNode({ controlPlane: cp, name: 'node-2' });
      try {
        const left = traces(victim);
        // The slot may have been taken again by the new node: then what is there is the new node's.
        if (path.dirname(root) !== path.dirname(next.root)) expect(left).toEqual([]);
        else expect(readFileSync(path.join(path.dirname(root), 'owner'), 'utf8')).toContain(`${process.pid} `);
      } finally {
        await next.stop();
      }
    },
    2 * NODE_START_MS,
  );

  it(
    'says in one line why a node did not come up, and leaves nothing behind',
    async () => {
      const before = readdirSync(nodesDir());
      // The kubelet refuses labels in the kubernetes.io namespace that it does not know.
      const failure = await startNode({
        controlPlane: cp,
        name: 'bad-labels',
        labels: { 'kubernetes.io/made-up': 'x' },
      }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(failure?.message).toMatch(
        /^node bad-labels did not come up: kubelet exited with code 1: .*kubernetes\.io/,
      );
      expect(failure?.message.split('\n')).toHaveLength(1);
      expect(readdirSync(nodesDir()).filter((d) => !before.includes(d))).toEqual([]);
    },
    NODE_START_MS,
  );
});
