// The server of a local-path run, on either tier: a fresh `kprov-testkit serve` with the PV binder, scheduler and
// kubelet on, or a fresh real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) with the
// testkit's simulated kubelet as a client in a child process (`kprov-testkit kubelet`), as the tests' real tier runs
// it. Either way the nodes' file systems are the folders given.
import { join } from 'node:path';
import { ROOT, startRealServer, startServer, testkit, waitForExit } from './common.js';

const TESTKIT_CLI = join(ROOT, 'packages/testkit/dist/cli.js');
const KUBELET_READY = 'kprov-testkit: kubelet ready';

/**
 * Starts the server of `tier` (`testkit` or `real`) for `nodes` (`[{ name, root }]`), its kubeconfig under `dir` on
 * the testkit. Resolves with `kubeconfig`, `pids` (name → pid or pids, for `cpuMeter`: `server`, and on the real
 * tier `controlPlane` (kube-controller-manager and kube-scheduler) and `kubelet`), `shellsOf` (the process whose
 * reaped children are the helper pods' shells) and `stop()`. Every process is added to `track` as it starts.
 */
export async function startLocalPathServer(tier, { dir, nodes, track }) {
  if (tier === 'testkit') {
    const server = await startServer(dir, {
      binder: true,
      scheduler: true,
      kubelet: true,
      nodes: nodes.map((n) => `${n.name}=${n.root}`),
      track,
    });
    return {
      kubeconfig: server.kubeconfig,
      pids: { server: server.child.pid },
      shellsOf: server.child.pid,
      async stop() {
        await server.stop();
        track.delete(server.child);
      },
    };
  }
  const cp = await startRealServer({ scheduler: true, track });
  let kubelet;
  try {
    kubelet = await testkit.startNodeProcess(
      'kprov-testkit kubelet',
      [
        TESTKIT_CLI,
        'kubelet',
        '--kubeconfig',
        cp.kubeconfig,
        ...nodes.flatMap((n) => ['--node', `${n.name}=${n.root}`]),
      ],
      KUBELET_READY,
      { timeoutMs: 60_000, onSpawn: (child) => track.add(child) },
    );
  } catch (err) {
    await cp.stop();
    throw err;
  }
  return {
    kubeconfig: cp.kubeconfig,
    pids: { server: cp.pids.server, controlPlane: [...cp.pids.kcm, ...cp.pids.scheduler], kubelet: kubelet.pid },
    shellsOf: kubelet.pid,
    async stop() {
      if (kubelet.exitCode === null && kubelet.signalCode === null) kubelet.kill('SIGTERM');
      await waitForExit(kubelet, 10_000);
      track.delete(kubelet);
      await cp.stop();
    },
  };
}
