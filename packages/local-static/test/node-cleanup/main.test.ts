/**
 * `local-volume-provisioner node-cleanup` in-process (`nodeCleanupMain`) on both tiers, with short flags on the real
 * clock: upstream's command line and defaults, a deleted Node's claim and PV cleaned up, the four metrics on
 * `/metrics`, `--kube-api-endpoint` pointing the kubeconfig elsewhere, and the warning when no class is opted in.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { currentTier, describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { nodeCleanupMain } from '../../src/node-cleanup/main.js';
import { NODE_CLEANUP_METRIC_NAMES } from '../../src/node-cleanup/metrics.js';
import { parseNodeCleanupCommandLine } from '../../src/node-cleanup/options.js';
import {
  boundVolume,
  createNode,
  deleteNode,
  FAST,
  metricValue,
  startEnv,
  waitClaimGone,
  waitNodeDeletedEvent,
  WAIT,
  type Env,
} from './helpers.js';

describe('node-cleanup command line', () => {
  it("has upstream's flags and defaults", () => {
    const line = parseNodeCleanupCommandLine([], {});
    expect(line).toEqual({
      kind: 'run',
      options: {
        kubeconfig: undefined,
        kubeApiEndpoint: undefined,
        resyncMs: 600_000,
        storageClassNames: [],
        workerThreads: 10,
        pvcDeletionDelayMs: 60_000,
        staleVolumeDiscoveryIntervalMs: 10_000,
        listenAddress: ':8080',
        metricsPath: '/metrics',
        verbosity: 0,
      },
      common: {
        kubeconfig: undefined,
        httpEndpoint: { host: '0.0.0.0', port: 8080 },
        leaderElection: false,
        verbosity: 0,
      },
    });
  });

  it('reads the class list as pflag does, repeated flags adding up', () => {
    const line = parseNodeCleanupCommandLine(
      ['--storageclass-names=fast-disks,nvme', '--storageclass-names', ' slow ,,fast-disks', '--listen-address='],
      {},
    );
    expect(line.kind === 'run' && line.options.storageClassNames).toEqual(['fast-disks', 'nvme', 'slow']);
    expect(line.kind === 'run' && line.common.httpEndpoint).toBeUndefined();
  });

  it.each([
    ['--worker-threads=0', 'invalid value "0" for flag -worker-threads: must be at least 1'],
    ['--stale-pv-discovery-interval=0s', 'must be greater than zero'],
    ['--pvc-deletion-delay=-1s', 'must not be negative'],
    ['--pvc-deletion-delay=60', 'invalid value "60" for flag -pvc-deletion-delay: parse error'],
    ['--listen-address=8080', 'must be ADDR:PORT, or empty for none'],
    ['--metrics-path=/healthz', 'must be a path starting with / other than /readyz and /healthz'],
    ['--kube-api-endpoint=not a url', 'must be a URL'],
    ['--config-dir=/etc', 'flag provided but not defined: -config-dir'],
  ])('refuses %s, saying why, with exit code 2', (arg, message) => {
    const line = parseNodeCleanupCommandLine([arg], {});
    expect(line.kind).toBe('exit');
    if (line.kind !== 'exit') return;
    expect(line.code).toBe(2);
    expect(line.stderr).toContain(message);
    expect(line.stderr).toContain('Usage of local-volume-provisioner node-cleanup:');
  });
});

/** A running `nodeCleanupMain` with captured output. */
interface Program {
  url: string | undefined;
  exited: Promise<number>;
  stop: () => Promise<number>;
  output: () => string;
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kprov-node-cleanup-'));
  currentTier().defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startMain(e: Env, args: string[], kubeconfig?: string): Promise<Program> {
  const file = kubeconfig ?? (await e.cluster.writeKubeconfig(path.join(tempDir(), 'kubeconfig')));
  const abort = new AbortController();
  let out = '';
  let started: (url: string | undefined) => void = () => undefined;
  const ready = new Promise<string | undefined>((resolve) => (started = resolve));
  const exited = nodeCleanupMain(
    ['--kubeconfig', file, ...args],
    {},
    {
      signal: abort.signal,
      handleSignals: false,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (out += s) },
      onStarted: ({ endpoint }) => started(endpoint?.url),
    },
  );
  const stop = async (): Promise<number> => {
    abort.abort();
    return exited;
  };
  currentTier().defer(stop);
  const url = await Promise.race([
    ready,
    exited.then((code) => Promise.reject(new Error(`exited with ${code}: ${out}`))),
  ]);
  return { url, exited, stop, output: () => out };
}

describeTiers('local-volume-provisioner node-cleanup', () => {
  it('deletes the claim of a deleted node after --pvc-deletion-delay, then its Released PV, and serves the four metrics', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
    const program = await startMain(e, [
      '--listen-address=127.0.0.1:0',
      `--storageclass-names=${FAST}`,
      '--pvc-deletion-delay=1s',
      '--stale-pv-discovery-interval=200ms',
    ]);
    expect(program.output()).toContain('Cleaning up local PVs and PVCs of deleted Nodes for these StorageClasses');

    await deleteNode(e, 'node-1');
    const event = await waitNodeDeletedEvent(e, 'data-0');
    expect(event.message).toBe(
      "PVC is tied to a deleted Node. PVC will be cleaned up in 1s if the Node doesn't come back",
    );
    await waitClaimGone(e, 'data-0');
    await vi.waitFor(async () => expect(await e.read.volume('pv-1')).toBeUndefined(), WAIT);

    const res = await fetch(`${program.url!}/metrics`);
    const text = await res.text();
    for (const name of Object.values(NODE_CLEANUP_METRIC_NAMES)) expect(text).toContain(`# TYPE ${name} counter`);
    expect(text).toContain(
      `# HELP ${NODE_CLEANUP_METRIC_NAMES.claimDelete} Total number of persistent volume claims deleted.`,
    );
    expect(metricValue(text, NODE_CLEANUP_METRIC_NAMES.claimDelete)).toBe(1);
    expect(metricValue(text, `${NODE_CLEANUP_METRIC_NAMES.volumeDelete}{phase="Released"}`)).toBe(1);
    expect(text).toContain('workqueue_adds_total{name="stalePVQueue"}');
    expect((await fetch(`${program.url!}/readyz`)).status).toBe(200);
    expect(await program.stop()).toBe(0);
  });

  it('says at the start that nothing is cleaned up when no class is opted in', async () => {
    const e = await startEnv();
    const program = await startMain(e, ['--listen-address=']);
    expect(program.url).toBeUndefined();
    expect(program.output()).toContain('No StorageClass is opted in (--storageclass-names is empty)');
    expect(await program.stop()).toBe(0);
  });

  it('reaches the API server at --kube-api-endpoint rather than the kubeconfig’s server', async () => {
    const e = await startEnv();
    const file = await e.cluster.writeKubeconfig(path.join(tempDir(), 'kubeconfig'));
    const config = parse(readFileSync(file, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    for (const c of config.clusters) c.cluster.server = 'http://127.0.0.1:1';
    writeFileSync(file, stringify(config));
    const program = await startMain(e, ['--listen-address=', `--kube-api-endpoint=${e.cluster.url}`], file);
    expect(await program.stop()).toBe(0);
  });
});
