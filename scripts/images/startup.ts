// The start-up time to ready of a provisioner's image: from starting its container as its shipped manifest does
// (`buildah run`, on the host's network) until the manifest's readiness probe (its liveness probe when it has none)
// answers 200, against the testkit's API server. The kubeconfig of that server stands in for the service account a
// pod has: it is mounted and named by KUBECONFIG, which the three binaries read.
import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApiServer, NODE_NAME } from './api-server.ts';
import { capture } from './exec.ts';
import { NotMeasurable, readLaunch, type Launch } from './manifest.ts';
import type { PackageImage } from './targets.ts';
import { stopwatch } from './time.ts';

/** Start-ups per image; the median is reported. */
const RUNS = 3;
const READY_TIMEOUT_MS = 60_000;
const POLL_MS = 20;
// Not under /var/run, a link to /run in Debian (see checkDestinations).
const KUBECONFIG = '/etc/kprov/kubeconfig';

export interface Startup {
  launch: Launch;
  /** The port the probe was served on: the host's network is shared, so the manifest's port is moved to a free one. */
  port: number;
  /** Milliseconds to ready, one per run. */
  runs: number[];
  /**
   * Milliseconds from starting `buildah run` with `sh -c 'echo'` until it printed, one per run: buildah's own share of
   * the times above, which a kubelet's container runtime replaces with its own.
   */
  overhead: number[];
}

export async function measureStartup(image: PackageImage, log: string): Promise<Startup> {
  const launch = readLaunch(image, NODE_NAME);
  const entrypoint = await imageEntrypoint(image.ref);
  const out = createWriteStream(log, { flags: 'w' });
  try {
    const runs: number[] = [];
    const overhead: number[] = [];
    let port = 0;
    for (let i = 0; i < RUNS; i++) {
      port = await freePort();
      runs.push(await startOnce(image, launch, entrypoint, port, out, log));
      overhead.push(await runOverhead(image.ref));
    }
    return { launch, port, runs, overhead };
  } finally {
    await new Promise<void>((resolve) => out.end(resolve));
  }
}

async function startOnce(
  image: PackageImage,
  launch: Launch,
  entrypoint: string[],
  port: number,
  out: WriteStream,
  log: string,
): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), `kprov-startup-${image.name}-`));
  const api = await startApiServer(join(dir, 'api'));
  let container: string | undefined;
  try {
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: launch.namespace } };
    await api.create([namespace, ...launch.objects]);
    const volumes = await materialize(launch, dir);
    const { args, env } = movePort(launch, port);
    const argv = [...(launch.command ?? entrypoint), ...args];
    container = (await capture('buildah', ['from', '--pull=false', '--quiet', image.ref])).trim();
    await checkDestinations(container, [KUBECONFIG, ...volumes.map((v) => v.split(':')[1] ?? '')]);

    const runArgs = [
      'run',
      '--isolation',
      'chroot',
      ...Object.entries({ ...env, KUBECONFIG }).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      ...['--volume', `${api.kubeconfig}:${KUBECONFIG}:ro`],
      ...volumes.flatMap((v) => ['--volume', v]),
      container,
      '--',
      ...argv,
    ];
    out.write(`$ buildah ${runArgs.join(' ')}\n`);
    const elapsed = stopwatch();
    // A process group of its own, so that stopping it stops what buildah started in the container too.
    const child = spawn('buildah', runArgs, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `exited (${code ?? signal}) before it was ready`));
    try {
      const url = `http://127.0.0.1:${port}${launch.probe.path}`;
      for (;;) {
        if (exited !== undefined) throw new NotMeasurable(`${image.ref} ${exited}; its output is in ${log}`);
        if (elapsed() > READY_TIMEOUT_MS) throw new NotMeasurable(`${image.ref} was not ready within 60 s (${url})`);
        if (await answers200(url)) return elapsed();
        await sleep(POLL_MS);
      }
    } finally {
      await stop(child);
    }
  } finally {
    if (container !== undefined) await capture('buildah', ['rm', container]).catch(() => undefined);
    await api.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** How long `buildah run` takes to start a shell in a new container of the image that prints a line. */
async function runOverhead(ref: string): Promise<number> {
  const container = (await capture('buildah', ['from', '--pull=false', '--quiet', ref])).trim();
  try {
    const elapsed = stopwatch();
    const child = spawn('buildah', ['run', '--isolation', 'chroot', container, '--', 'sh', '-c', 'echo up'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let printed: number | undefined;
    child.stdout.once('data', () => (printed = elapsed()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (printed === undefined) throw new NotMeasurable(`buildah run of a shell in ${ref} printed nothing (${code})`);
    return printed;
  } finally {
    await capture('buildah', ['rm', container]);
  }
}

/** The image's ENTRYPOINT, which the container runs when its manifest gives no `command`. */
async function imageEntrypoint(ref: string): Promise<string[]> {
  const out = await capture('buildah', [
    'inspect',
    '--type',
    'image',
    '--format',
    '{{range .OCIv1.Config.Entrypoint}}{{.}}{{"\\n"}}{{end}}',
    ref,
  ]);
  return out.split('\n').filter((l) => l !== '');
}

/**
 * Fails when a mount's destination goes through a symbolic link in the image (/var/run is one): `buildah run` with
 * chroot isolation follows an absolute link on the host, and would mount there.
 */
async function checkDestinations(container: string, destinations: string[]): Promise<void> {
  const root = (await capture('buildah', ['mount', container])).trim();
  try {
    for (const destination of destinations) {
      let path = root;
      for (const part of destination.split('/').filter((p) => p !== '')) {
        path = join(path, part);
        const stats = await lstat(path).catch(() => undefined);
        // What does not exist, buildah creates inside the container.
        if (stats === undefined) break;
        if (stats.isSymbolicLink()) {
          throw new NotMeasurable(
            `${destination} is mounted through the symbolic link ${path.slice(root.length)} of the image, which ` +
              `buildah run would follow on the host`,
          );
        }
      }
    }
  } finally {
    await capture('buildah', ['umount', container]);
  }
}

/**
 * The `--volume` options for the manifest's volumes: a ConfigMap as a folder of its keys, a hostPath or emptyDir as
 * an empty folder (the host's own paths are left alone), except /dev, which `buildah run` gives the container.
 */
async function materialize(launch: Launch, dir: string): Promise<string[]> {
  const volumes: string[] = [];
  for (const [i, mount] of launch.mounts.entries()) {
    if (mount.kind === 'hostPath' && mount.path === '/dev') continue;
    const source = join(dir, 'volumes', String(i));
    await mkdir(source, { recursive: true });
    if (mount.kind === 'configMap') {
      for (const [key, value] of Object.entries(mount.data)) await writeFile(join(source, key), value);
      volumes.push(`${source}:${mount.mountPath}:ro`);
    } else {
      volumes.push(`${source}:${mount.mountPath}`);
    }
  }
  return volumes;
}

/** The args and environment with the probe's port replaced by `port` (`:8080`, `0.0.0.0:8080`, `"8080"`). */
function movePort(launch: Launch, port: number): { args: string[]; env: Record<string, string> } {
  const pattern = new RegExp(`(^|:)${launch.probe.port}$`);
  let moved = 0;
  const move = (value: string): string =>
    value.replace(pattern, (_m, before: string) => {
      moved++;
      return `${before}${port}`;
    });
  const args = launch.args.map(move);
  const env = Object.fromEntries(Object.entries(launch.env).map(([k, v]) => [k, move(v)]));
  if (moved === 0) {
    throw new NotMeasurable(
      `${launch.manifest}: port ${launch.probe.port} is in none of the container's args and environment, so it ` +
        `cannot be moved off the host's port`,
    );
  }
  return { args, env };
}

async function answers200(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Stops the process group, whatever of it is left (`buildah run` and what it started in the container): SIGTERM, then
 * SIGKILL after 10 s.
 */
async function stop(child: ReturnType<typeof spawn>): Promise<void> {
  if (child.pid === undefined) return;
  const done = child.exitCode !== null || child.signalCode !== null;
  const closed = done ? Promise.resolve() : new Promise<void>((resolve) => child.once('close', () => resolve()));
  signal(-child.pid, 'SIGTERM');
  const timeout = sleep(10_000, 'timeout' as const, { ref: false });
  if ((await Promise.race([closed, timeout])) === 'timeout') {
    signal(-child.pid, 'SIGKILL');
    await closed;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
