// The local-static part of the bench: emptying a released volume (the package's `removeContents`) beside `rm -rf` of
// the same tree in the same run, on tmpfs and on a loop-mounted ext4; then the `local-volume-provisioner` binary at
// rest with its volumes discovered, on the testkit, as the image starts it and with plain `node`, and beside it the
// other per-node binary, local-path's provisioner in node mode, at rest. See bench/README.md.
import { Buffer } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import {
  k8s,
  lib,
  loadKubeConfig,
  median,
  nodeFloor,
  now,
  procRssMiB,
  ROOT,
  startServer,
  waitForExit,
} from './common.js';
import { deployObjects } from './local-path-deploy.js';
import { startProvisioner } from './local-path-process.js';
import { until } from './until.js';

const PACKAGE = join(ROOT, 'packages/local-static');
const CLI = join(PACKAGE, 'dist/cli.js');
const NODE_NAME = 'node-1';
const CLASS = 'local-storage';
const HOST_DIR = '/mnt/disks';

/** Whether this process may mount (root). */
export const CAN_MOUNT = process.platform === 'linux' && process.getuid?.() === 0;

function run(file, args) {
  execFileSync(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Clock ticks of CPU (user + system) a process has used, from /proc/<pid>/stat; NaN when it is gone. */
export function procTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return NaN;
  }
}

/** `{ stop }` running `fn` once, as run.js stops what it tracks. */
function once(fn) {
  let done = false;
  return {
    async stop() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

// ---- emptying ----------------------------------------------------------------------------------------------------

/** `files` small files of `bytes` each in a tree of 100 folders of 10 sub-folders each, under `dir`. */
function smallTree(dir, files, bytes) {
  const data = Buffer.alloc(bytes, 120);
  const perLeaf = Math.ceil(files / 1000);
  let made = 0;
  for (let a = 0; a < 100 && made < files; a++) {
    for (let b = 0; b < 10 && made < files; b++) {
      const leaf = join(dir, `dir-${a}`, `sub-${b}`);
      mkdirSync(leaf, { recursive: true });
      for (let c = 0; c < perLeaf && made < files; c++, made++) writeFileSync(join(leaf, `file-${c}`), data);
    }
  }
}

/** `count` files of `mib` MiB each, written (not sparse), under `dir`. */
function largeFiles(dir, count, mib) {
  const chunk = Buffer.alloc(8 << 20, 1);
  for (let i = 0; i < count; i++) {
    const fd = openSync(join(dir, `large-${i}`), 'w');
    try {
      for (let written = 0; written < mib << 20; written += chunk.length) writeSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * A mounted filesystem to empty volumes on: `tmpfs` (as root a tmpfs of its own; otherwise /dev/shm when it is a
 * tmpfs with room) or `ext4` (a loop-mounted image, as root only). Resolves with `{ dir, unmount }`, or `{ skipped }`
 * saying why not.
 */
function filesystem(kind, tmpRoot, needMiB) {
  const mountPoint = join(tmpRoot, `empty-${kind}`);
  if (!CAN_MOUNT) {
    if (kind === 'ext4') return { skipped: 'not root: a loop-mounted ext4 needs root' };
    try {
      const fs = statfsSync('/dev/shm');
      if (fs.type !== 0x01021994) return { skipped: 'not root, and /dev/shm is not a tmpfs' };
      if ((fs.bavail * fs.bsize) / 2 ** 20 < needMiB)
        return { skipped: `not root, and /dev/shm has less than ${needMiB} MiB free` };
    } catch {
      return { skipped: 'not root, and there is no /dev/shm' };
    }
    const dir = join('/dev/shm', `kprov-bench-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    return { dir, how: 'a folder in /dev/shm', unmount: () => run('rm', ['-rf', dir]) };
  }
  mkdirSync(mountPoint, { recursive: true });
  if (kind === 'tmpfs') {
    run('mount', ['-t', 'tmpfs', '-o', `size=${needMiB + 512}m`, 'tmpfs', mountPoint]);
    return { dir: mountPoint, how: 'a tmpfs', unmount: () => run('umount', [mountPoint]) };
  }
  const image = join(tmpRoot, 'empty-ext4.img');
  run('truncate', ['-s', `${needMiB * 2 + 1024}M`, image]);
  run('mkfs.ext4', ['-q', '-F', image]);
  run('mount', ['-o', 'loop', image, mountPoint]);
  return {
    dir: mountPoint,
    how: 'ext4 on a loop device over a file on the machine’s disk',
    unmount: () => {
      run('umount', [mountPoint]);
      run('rm', ['-f', image]);
    },
  };
}

/** Runs `argv` and resolves with its exit code. */
function exitCode(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
}

/**
 * Empties `workload` (`small` or `large`) on `kind` (`tmpfs`, `ext4`) `rounds` times with the package's
 * `removeContents` and as many with `rm -rf` of the volume's entries, alternating, each on a tree made afresh and
 * synced to disk first. Resolves with the seconds of each.
 */
async function emptyingRuns(kind, workload, settings, { tmpRoot, track, log, aborted, removeContents }) {
  const needMiB =
    workload === 'small'
      ? Math.ceil((settings.smallFiles * Math.max(4096, settings.smallBytes)) / 2 ** 20) + 256
      : settings.largeFiles * settings.largeMiB + 256;
  const fs = filesystem(kind, tmpRoot, needMiB);
  if (fs.skipped !== undefined) return { kind, workload, skipped: fs.skipped };
  // Undone on the way out, Ctrl-C included (run.js stops what is tracked).
  const mounted = once(fs.unmount);
  track.add(mounted);
  const volume = join(fs.dir, 'volume');
  const ours = [];
  const anchor = [];
  try {
    for (let round = 0; round < settings.rounds; round++) {
      for (const which of ['ours', 'anchor']) {
        if (aborted()) throw new Error('stopped');
        mkdirSync(volume, { recursive: true });
        if (workload === 'small') smallTree(volume, settings.smallFiles, settings.smallBytes);
        else largeFiles(volume, settings.largeFiles, settings.largeMiB);
        run('sync', []);
        const t = now();
        if (which === 'ours') await removeContents(volume, globalThis.AbortSignal.timeout(600_000));
        else {
          // `rm -rf volume/*`: every entry of the volume, the volume itself kept, as a cleanup must.
          const code = await exitCode(['sh', '-c', 'rm -rf -- "$0"/*', volume]);
          if (code !== 0) throw new Error(`rm -rf exited with ${code}`);
        }
        const s = (now() - t) / 1000;
        (which === 'ours' ? ours : anchor).push(s);
        log(`local-static: emptying ${workload} on ${kind}, ${which}: ${s.toFixed(2)} s`);
        run('rm', ['-rf', volume]);
      }
    }
  } finally {
    track.delete(mounted);
    await mounted.stop();
  }
  return { kind, how: fs.how, workload, ours, anchor, oursMedian: median(ours), anchorMedian: median(anchor) };
}

// ---- at rest -----------------------------------------------------------------------------------------------------

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function ready(url) {
  try {
    const res = await globalThis.fetch(`${url}/ready`);
    return res.status === 200 && (await res.text()) === 'ok';
  } catch {
    return false;
  }
}

/**
 * A process at rest: `settleS` seconds, then its RSS every second for `idleS` seconds and its CPU ticks over them
 * (`{ ticks, rssEnd, rssMin, rssMax }`).
 */
async function idleSample(child, settleS, idleS) {
  await sleep(settleS * 1000);
  const rss = [procRssMiB(child.pid)];
  const ticks0 = procTicks(child.pid);
  for (let s = 0; s < idleS; s++) {
    await sleep(1000);
    rss.push(procRssMiB(child.pid));
  }
  return {
    ticks: procTicks(child.pid) - ticks0,
    rssEnd: rss.at(-1),
    rssMin: Math.min(...rss),
    rssMax: Math.max(...rss),
  };
}

/**
 * local-path's provisioner in node mode (one pod of its DaemonSet: `--node-mode` for `NODE_NAME`, a folder standing
 * for the node's root), started by `launcher` on the testkit at `kubeconfig` with the deploy manifest's ConfigMap in
 * `namespace` and no claims: from its start to `Started provisioner controller`, then at rest as {@link idleSample}.
 */
async function nodeModeAtRest(launcher, { kubeconfig, namespace, hostRoot, settleS, idleS, track }) {
  const started = now();
  const provisioner = await startProvisioner(
    { kubeconfig, namespace, workers: 4, qps: 5, burst: 10, nodeMode: { nodeName: NODE_NAME, hostRoot } },
    track,
    launcher,
  );
  try {
    const readyS = (now() - started) / 1000;
    const idle = await idleSample(provisioner.child, settleS, idleS);
    if (provisioner.child.exitCode !== null)
      throw new Error(`local-path-provisioner exited:\n${provisioner.tail().join('\n')}`);
    return { launcher: launcher.name, readyS, ...idle };
  } finally {
    await provisioner.stop();
    track.delete(provisioner.child);
  }
}

/**
 * The binary started by `launcher` (`{ name, execPath, env }`), its config naming `discovery`, on the testkit at
 * `kubeconfig`: waits until it is ready with `volumes` PVs published, `settleS` seconds more, then samples its RSS
 * every second for `idleS` seconds and counts its CPU ticks over them.
 */
async function atRest(launcher, { kubeconfig, configDir, volumes, core, settleS, idleS, track, log }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const lines = [];
  const child = spawn(
    launcher.execPath,
    [CLI, '--kubeconfig', kubeconfig, '--config-dir', configDir, '--listen-address', `127.0.0.1:${port}`],
    {
      env: { ...process.env, ...launcher.env, MY_NODE_NAME: NODE_NAME, MY_NAMESPACE: 'default' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  track.add(child);
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8').on('data', (d) => {
      lines.push(...d.split('\n').filter((l) => l !== ''));
      lines.splice(0, Math.max(0, lines.length - 20));
    });
  }
  const started = now();
  try {
    const up = await until(
      async () =>
        child.exitCode === null &&
        (await ready(url)) &&
        ((await core.listPersistentVolume()).items ?? []).length === volumes,
      60_000,
      100,
    );
    if (!up)
      throw new Error(`local-volume-provisioner was not ready with ${volumes} PVs in 60 s:\n${lines.join('\n')}`);
    const readyS = (now() - started) / 1000;
    log(
      `local-static: ${launcher.name}: ready with ${volumes} PVs after ${readyS.toFixed(1)} s; settling ${settleS} s`,
    );
    const idle = await idleSample(child, settleS, idleS);
    if (child.exitCode !== null) throw new Error(`local-volume-provisioner exited:\n${lines.join('\n')}`);
    return { launcher: launcher.name, readyS, ...idle };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await waitForExit(child, 10_000);
    track.delete(child);
  }
}

/**
 * The provisioner at rest: `volumes` bind mounts in a discovery folder, a testkit server with the StorageClass, and
 * one run per launcher; the PVs are deleted between runs so that each discovers them all.
 */
async function restRuns(settings, { tmpRoot, track, log, launchers }) {
  if (!CAN_MOUNT) return { skipped: 'not root: the discovered volumes are bind mounts, which need root' };
  const discovery = join(tmpRoot, 'discovery');
  const mounted = [];
  const unmount = once(() => {
    for (const dir of mounted.reverse()) {
      try {
        run('umount', [dir]);
      } catch {
        // left for the temporary folder's removal to report
      }
    }
  });
  track.add(unmount);
  mkdirSync(join(tmpRoot, 'rest-server'), { recursive: true });
  const server = await startServer(join(tmpRoot, 'rest-server'), {
    binder: true,
    scheduler: false,
    kubelet: false,
    nodes: [NODE_NAME],
    track,
  });
  try {
    for (let i = 0; i < settings.volumes; i++) {
      const dir = join(discovery, `vol-${i}`);
      mkdirSync(dir, { recursive: true });
      run('mount', ['--bind', dir, dir]);
      mounted.push(dir);
    }
    const configDir = join(tmpRoot, 'rest-config');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, 'storageClassMap'), `${CLASS}:\n  hostDir: ${HOST_DIR}\n  mountDir: ${discovery}\n`);
    const kc = loadKubeConfig(server.kubeconfig);
    const core = lib.makeApiClient(kc, k8s.CoreV1Api);
    const storage = lib.makeApiClient(kc, k8s.StorageV1Api);
    await storage.createStorageClass({
      body: {
        metadata: { name: CLASS },
        provisioner: 'kubernetes.io/no-provisioner',
        volumeBindingMode: 'WaitForFirstConsumer',
      },
    });
    const runs = [];
    for (const launcher of launchers) {
      runs.push(
        await atRest(launcher, {
          kubeconfig: server.kubeconfig,
          configDir,
          volumes: settings.volumes,
          core,
          settleS: settings.settleS,
          idleS: settings.idleS,
          track,
          log,
        }),
      );
      await core.deleteCollectionPersistentVolume({});
      await until(async () => ((await core.listPersistentVolume()).items ?? []).length === 0, 30_000, 100);
    }
    // What Node.js alone takes, started the same ways: a metrics server and one request to the same API server,
    // measured as long after that as the binary after its start.
    const floors = [];
    for (const launcher of launchers) {
      const afterMs = (settings.settleS + settings.idleS) * 1000;
      const rss = await nodeFloor(join(tmpRoot, 'rest-config'), server.url, 'mjs', { launcher, afterMs });
      floors.push({ launcher: launcher.name, rss });
    }
    // local-path's other per-node binary, node mode, on the same server with nothing to provision.
    const deploy = await deployObjects();
    await core.createNamespace({ body: { metadata: { name: deploy.namespace } } });
    await core.createNamespacedConfigMap({ namespace: deploy.namespace, body: deploy.configMap });
    const hostRoot = join(tmpRoot, 'node-mode-root');
    mkdirSync(hostRoot, { recursive: true });
    const nodeMode = [];
    for (const launcher of launchers) {
      nodeMode.push(
        await nodeModeAtRest(launcher, {
          kubeconfig: server.kubeconfig,
          namespace: deploy.namespace,
          hostRoot,
          settleS: settings.settleS,
          idleS: settings.idleS,
          track,
        }),
      );
    }
    return { volumes: settings.volumes, idleS: settings.idleS, settleS: settings.settleS, runs, floors, nodeMode };
  } finally {
    track.delete(unmount);
    await unmount.stop();
    await server.stop();
    track.delete(server.child);
  }
}

/**
 * The whole part. `settings`: `{ rounds, smallFiles, smallBytes, largeFiles, largeMiB, volumes, settleS, idleS }`;
 * `context`: `{ tmpRoot, track, log, aborted, launchers }` (launchers: `[{ name, execPath, env }]`).
 */
export async function localStaticPart(settings, context) {
  const { removeContents } = await import(pathToFileURL(join(PACKAGE, 'dist/index.js')).href);
  // Untimed, once: the first call loads and compiles what it runs (about 0.2 s), as a provisioner's first cleanup does.
  const warm = join(context.tmpRoot, 'warm-up');
  mkdirSync(join(warm, 'entry'), { recursive: true });
  await removeContents(warm, globalThis.AbortSignal.timeout(60_000));
  const emptying = [];
  for (const kind of ['tmpfs', 'ext4'])
    for (const workload of ['small', 'large'])
      emptying.push(await emptyingRuns(kind, workload, settings, { ...context, removeContents }));
  const rest = await restRuns(settings, context);
  return { settings, emptying, rest };
}
