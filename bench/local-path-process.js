// The local-path-provisioner binary (packages/local-path/dist/cli.js) as a child process, started as its
// Deployment would start it (or, in node mode, as one pod of its DaemonSet), plus the flags a bench must pin down.
import { spawn } from 'node:child_process';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { nodeLauncher, waitForExit } from './common.js';
import { LOCAL_PATH_CLI } from './local-path-deploy.js';

const READY = 'Started provisioner controller';
const TAIL_LINES = 40;

/**
 * The command line: the ConfigMap of `namespace` as config source, `--worker-threads`, client-side rate limit
 * `--kube-api-qps`/`--kube-api-burst` given explicitly (so a change of their defaults cannot change what is
 * measured), leader election off (one replica; the election is not what is measured), and the health server on a
 * free port so that runs never clash over 8080. With `nodeMode` (`{ nodeName, hostRoot }`): `--node-mode`, the
 * node's name, and the folder standing for that node's root file system as `--host-root`.
 */
export function provisionerArgs({ kubeconfig, namespace, workers, qps, burst, nodeMode }) {
  return [
    'start',
    '--kubeconfig',
    kubeconfig,
    '--namespace',
    namespace,
    `--worker-threads=${workers}`,
    `--kube-api-qps=${qps}`,
    `--kube-api-burst=${burst}`,
    '--leader-election=false',
    '--health-port=0',
    ...(nodeMode === undefined
      ? []
      : ['--node-mode', '--node-name', nodeMode.nodeName, '--host-root', nodeMode.hostRoot]),
  ];
}

/**
 * Starts the provisioner and resolves once it logged `Started provisioner controller` (informers synced, workers
 * running). Its output is drained; the last lines are kept for `tail()`. The child is added to `track` at once.
 * `node`: how to start Node.js ({ execPath, env }, see `nodeLauncher`; default as the images start it).
 */
export async function startProvisioner(settings, track, node = nodeLauncher(false), timeoutMs = 30_000) {
  const child = spawn(node.execPath, [LOCAL_PATH_CLI, ...provisionerArgs(settings)], {
    env: { ...process.env, ...node.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track.add(child);
  const lines = [];
  let ready = false;
  let resolveReady;
  const readyPromise = new Promise((resolve) => {
    resolveReady = resolve;
  });
  let partial = '';
  const onData = (d) => {
    const text = partial + d;
    const parts = text.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (lines.length > TAIL_LINES) lines.shift();
      if (!ready && line.includes(READY)) {
        ready = true;
        resolveReady();
      }
    }
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`local-path-provisioner did not log "${READY}" within ${timeoutMs} ms:\n${lines.join('\n')}`)),
      timeoutMs,
    );
    const onExit = (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`local-path-provisioner exited (${code ?? signal}) before it started:\n${lines.join('\n')}`));
    };
    child.once('exit', onExit);
    void readyPromise.then(() => {
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve();
    });
  });
  return {
    child,
    tail: () => [...lines],
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child, 10_000);
    },
  };
}
