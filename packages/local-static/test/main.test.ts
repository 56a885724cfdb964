/**
 * The binary in-process (`main`) on both tiers, as a DaemonSet runs it: the environment, the mounted ConfigMap
 * directory and its live reload (a bad config keeps the last good one and fails `/ready`, a fixed one applies), the
 * metrics on `/metrics` (upstream's twelve and ours), and the startup taint removed once ready.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { currentTier, describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it, vi } from 'vitest';
import { volumeName } from '../src/discovery/volume-name.js';
import { main, type MainContext } from '../src/main.js';
import { METRIC_NAMES } from '../src/metrics/metrics.js';
import type { LocalStaticProvisioner } from '../src/provisioner.js';
import { HOST_DIR, morePasses, startEnv, storageClass, waitReady, waitVolumes, WAIT, type Env } from './helpers.js';

const NODE = 'node-1';

/** A running `main` with captured output. */
interface Program {
  url: string;
  provisioner: LocalStaticProvisioner;
  exited: Promise<number>;
  stop: () => Promise<number>;
  output: () => string;
}

/** Writes the ConfigMap's keys as the kubelet does (one file per key). */
function writeConfig(dir: string, keys: Record<string, string>): void {
  for (const [key, text] of Object.entries(keys)) writeFileSync(path.join(dir, key), text);
}

async function startMain(e: Env, configDir: string, env: Record<string, string> = {}): Promise<Program> {
  const kubeconfig = await e.cluster.writeKubeconfig(path.join(configDir, '..', 'kubeconfig'));
  const abort = new AbortController();
  let out = '';
  let started: (s: { url: string; provisioner: LocalStaticProvisioner }) => void = () => undefined;
  const ready = new Promise<{ url: string; provisioner: LocalStaticProvisioner }>((resolve) => (started = resolve));
  const context: MainContext = {
    signal: abort.signal,
    handleSignals: false,
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (out += s) },
    mountInfoPath: e.mounts.mountInfoPath,
    onStarted: ({ endpoint, provisioner }) => started({ url: endpoint!.url, provisioner }),
  };
  const exited = main(
    [
      '--kubeconfig',
      kubeconfig,
      '--listen-address',
      '127.0.0.1:0',
      '--discovery-period',
      '100ms',
      '--config-sync-period',
      '100ms',
      '--config-dir',
      configDir,
    ],
    { MY_NODE_NAME: NODE, MY_NAMESPACE: 'default', ...env },
    context,
  );
  const stop = async (): Promise<number> => {
    abort.abort();
    return exited;
  };
  currentTier().defer(stop);
  const s = await Promise.race([
    ready,
    exited.then((code) => Promise.reject(new Error(`exited with ${code}: ${out}`))),
  ]);
  return { ...s, exited, stop, output: () => out };
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kprov-static-main-'));
  currentTier().defer(() => rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config');
  mkdirSync(config);
  return config;
}

describeTiers('local-volume-provisioner', () => {
  it("publishes disks, serves /ready and upstream's twelve metrics with ours, reloads its config and keeps the last good one", async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    await e.storage.createStorageClass({ body: storageClass('sc2') });
    const mountDir = e.onNode(NODE, HOST_DIR);
    const mountDir2 = e.onNode(NODE, '/mnt/other');
    mkdirSync(mountDir2, { recursive: true });
    e.mounts.mount(`${mountDir}/disk1`);
    const configDir = tempDir();
    writeConfig(configDir, {
      storageClassMap: `sc1:\n  hostDir: ${HOST_DIR}\n  mountDir: ${mountDir}\n`,
      useJobForCleaning: 'yes',
      unknownKey: 'ignored: true\n',
    });
    const program = await startMain(e, configDir);
    await waitVolumes(e, [volumeName('disk1', NODE, 'sc1')]);
    await vi.waitFor(async () => expect(await get(`${program.url}/ready`)).toEqual({ status: 200, body: 'ok' }), WAIT);

    const metrics = (await get(`${program.url}/metrics`)).body;
    for (const name of Object.values(METRIC_NAMES)) expect(metrics).toContain(`# TYPE ${name} `);
    expect(metrics).toContain(`# TYPE ${METRIC_NAMES.procRunning} gauge`);
    expect(metrics).toContain(`# HELP ${METRIC_NAMES.procRunning} Number of running operations in proctable.`);
    expect(metrics).toContain(`# TYPE ${METRIC_NAMES.deleteDuration} histogram`);

    // A class entry that is wrong: reported, /ready fails, the rest keeps working.
    writeConfig(configDir, {
      storageClassMap: `sc1:\n  hostDir: ${HOST_DIR}\n  mountDir: ${mountDir}\nsc2:\n  hostDir: /mnt/other\n  mountDir: ${mountDir2}\nbroken:\n  hostDir: /mnt/broken\n`,
    });
    await vi.waitFor(async () => {
      const ready = await get(`${program.url}/ready`);
      expect(ready.status).toBe(500);
      expect(ready.body).toContain('Storage Class broken is misconfigured, missing HostDir or MountDir parameter');
    }, WAIT);
    e.mounts.mount(`${mountDir2}/disk2`);
    await waitVolumes(e, [volumeName('disk1', NODE, 'sc1'), volumeName('disk2', NODE, 'sc2')]);

    // A config that does not parse: the last one stays in force (sc2 is still discovered), /ready says why.
    writeConfig(configDir, { storageClassMap: 'sc1: [unclosed\n' });
    await vi.waitFor(async () => {
      const ready = await get(`${program.url}/ready`);
      expect(ready.status).toBe(500);
      expect(ready.body).toContain('key storageClassMap is not valid YAML');
      expect(ready.body).toContain('keeping the last valid configuration');
    }, WAIT);
    e.mounts.mount(`${mountDir2}/disk3`);
    await waitVolumes(e, [
      volumeName('disk1', NODE, 'sc1'),
      volumeName('disk2', NODE, 'sc2'),
      volumeName('disk3', NODE, 'sc2'),
    ]);

    // Fixed: applied, ready again.
    writeConfig(configDir, { storageClassMap: `sc1:\n  hostDir: ${HOST_DIR}\n  mountDir: ${mountDir}\n` });
    await vi.waitFor(async () => expect(await get(`${program.url}/ready`)).toEqual({ status: 200, body: 'ok' }), WAIT);
    expect(await program.stop()).toBe(0);
    expect(program.output()).not.toContain('"Provisioner failed"');
  });

  it('removes the startup taint once ready, and only its own', async () => {
    const e = await startEnv();
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const key = 'sig-storage-local-static-provisioner/agent-not-ready';
    const node = await e.core.readNode({ name: NODE });
    node.spec = {
      ...node.spec,
      taints: [
        ...(node.spec?.taints ?? []),
        { key, effect: 'NoSchedule' },
        { key: 'example.com/other', effect: 'NoSchedule' },
      ],
    };
    await e.core.replaceNode({ name: NODE, body: node });
    const mountDir = e.onNode(NODE, HOST_DIR);
    mkdirSync(mountDir, { recursive: true });
    const configDir = tempDir();
    writeConfig(configDir, {
      storageClassMap: `sc1:\n  hostDir: ${HOST_DIR}\n  mountDir: ${mountDir}\n`,
      removeNodeNotReadyTaint: 'true',
      provisionerNotReadyNodeTaintKey: key,
    });
    await startMain(e, configDir);
    await vi.waitFor(async () => {
      const taints = (await e.core.readNode({ name: NODE })).spec?.taints ?? [];
      expect(taints.map((t) => t.key)).not.toContain(key);
      expect(taints.map((t) => t.key)).toContain('example.com/other');
    }, WAIT);
  });

  it('leaves the startup taint when removal is off, and a Node without it as it is', async () => {
    const e = await startEnv([{ name: 'node-a' }, { name: 'node-b' }]);
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const key = 'sig-storage-local-static-provisioner/agent-not-ready';
    const other = { key: 'example.com/other', effect: 'NoSchedule' };
    const taint = async (name: string, add: { key: string; effect: string }[]): Promise<void> => {
      const node = await e.core.readNode({ name });
      node.spec = { ...node.spec, taints: [...(node.spec?.taints ?? []), ...add] };
      await e.core.replaceNode({ name, body: node });
    };
    await taint('node-a', [{ key, effect: 'NoSchedule' }, other]);
    await taint('node-b', [other]);
    // Only these two keys: the real tier's node controller may add and remove taints of its own.
    const taints = async (name: string): Promise<string[]> =>
      ((await e.core.readNode({ name })).spec?.taints ?? [])
        .filter((t) => t.key === key || t.key === other.key)
        .map((t) => `${t.key}:${t.effect}`);
    const server = e.cluster.testkit?.server;
    server?.resetRequestCounts();
    const instances = [];
    for (const [node, remove] of [
      ['node-a', false],
      ['node-b', true],
    ] as const) {
      mkdirSync(e.onNode(node, HOST_DIR), { recursive: true });
      instances.push(
        await e.start(node, {
          storageClassMap: { sc1: { hostDir: HOST_DIR, mountDir: e.onNode(node, HOST_DIR) } },
          removeNodeNotReadyTaint: remove,
          provisionerNotReadyNodeTaintKey: key,
        }),
      );
    }
    for (const instance of instances) {
      await waitReady(instance);
      await morePasses(instance, 3);
    }
    expect(await taints('node-a')).toEqual([`${key}:NoSchedule`, 'example.com/other:NoSchedule']);
    expect(await taints('node-b')).toEqual(['example.com/other:NoSchedule']);
    // No Node was written (the testkit counts the requests).
    if (server !== undefined) expect(server.requestCounts()['update nodes']).toBeUndefined();
  });
});

describe('local-volume-provisioner start-up', () => {
  const run = async (argv: string[], env: Record<string, string>): Promise<{ code: number; out: string }> => {
    let out = '';
    const code = await main(argv, env, {
      handleSignals: false,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (out += s) },
    });
    return { code, out };
  };

  it('exits 1 with a clear error without MY_NODE_NAME', async () => {
    const { code, out } = await run([], {});
    expect(code).toBe(1);
    expect(out).toContain('MY_NODE_NAME environment variable not set');
  });

  it("prints upstream's flags with their defaults, and refuses a bad value with exit code 2", async () => {
    const help = await run(['--help'], {});
    expect(help.code).toBe(0);
    for (const flag of [
      '-listen-address address',
      '(default ":8080")',
      '-metrics-path path',
      '(default "/metrics")',
      '-discovery-period duration',
      '(default 10s)',
      '-config-sync-period duration',
      '(default 5s)',
      '-kubeconfig file',
    ]) {
      expect(help.out).toContain(flag);
    }
    const bad = await run(['--discovery-period', 'soon'], {});
    expect(bad.code).toBe(2);
    expect(bad.out).toContain('invalid value "soon" for flag -discovery-period: parse error');
  });

  it('exits 1 when the config directory cannot be read', async () => {
    const { code, out } = await run(
      ['--config-dir', '/nonexistent/config', '--kubeconfig', '/nonexistent/kubeconfig'],
      { MY_NODE_NAME: NODE },
    );
    expect(code).toBe(1);
    expect(out).toMatch(
      /Error parsing Provisioner's configuration: cannot read the config directory \/nonexistent\/config|nonexistent\/kubeconfig/,
    );
  });
});
