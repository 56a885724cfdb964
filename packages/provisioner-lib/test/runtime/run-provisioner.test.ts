/**
 * `runProvisioner` in-process, on both tiers: a provisioner run from its flags and setup, its metrics and health
 * served over real HTTP, the Lease given up on stop before the clean-ups, the exit codes of stop, failure and lost
 * leadership, and a binary's own command line parser.
 */
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, KubeConfig, type V1PersistentVolume } from '@kubernetes/client-node';
import { ObjectReader, type Cluster } from '@kprov/testkit';
import { describeTiers, type TierContext } from '@kprov/testkit/vitest';
import { Counter } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientRateLimiter } from '../../src/client/rate-limit/client-rate-limit.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import type { RequestRateLimiter, TokenBucketRateLimiter } from '../../src/client/rate-limit/token-bucket.js';
import { runProvisioner } from '../../src/runtime/run-provisioner.js';
import type {
  DaemonSetup,
  ProvisionerSetup,
  RuntimeContext,
  SetupContext,
  StartedProvisioner,
} from '../../src/runtime/run-options.js';
import { apiOf, createClaim, createClass, waitBound, WAIT } from '../support/cluster.js';

const PROVISIONER = 'example.com/runtime-test';

/** Volumes that exist only in their PV objects. */
const provisioner: Provisioner = {
  async provision({ pvName }) {
    const volume: V1PersistentVolume = {
      metadata: { name: pvName },
      spec: {
        persistentVolumeReclaimPolicy: 'Delete',
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '1Mi' },
        hostPath: { path: `/nowhere/${pvName}` },
      },
    };
    return { volume };
  },
  async delete() {},
};

/** One JSON log line. */
interface Line {
  msg: string;
  [key: string]: unknown;
}

/** A run of `runProvisioner` with captured output, stopped (and awaited) by `stop()` or after the test. */
interface Run {
  exited: Promise<number>;
  stop: () => Promise<number>;
  started: Promise<StartedProvisioner>;
  lines: () => Line[];
  stdout: () => string;
  stderr: () => string;
}

type Setup = (
  context: SetupContext<{ backend: string }>,
) => ProvisionerSetup | DaemonSetup | Promise<ProvisionerSetup | DaemonSetup>;

const defaultSetup: Setup = () => ({ provisionerName: PROVISIONER, provisioner });

/** `runProvisioner` with one flag of its own (`--backend`) and `argv`, JSON logs, signals left alone. */
function run(
  argv: string[],
  setup: Setup = defaultSetup,
  context: Partial<RuntimeContext> & {
    messages?: Parameters<typeof runProvisioner>[0]['messages'];
    env?: Parameters<typeof runProvisioner>[0]['env'];
  } = {},
): Run {
  const abort = new AbortController();
  let stdout = '';
  let stderr = '';
  let resolveStarted: (s: StartedProvisioner) => void = () => undefined;
  const started = new Promise<StartedProvisioner>((resolve) => (resolveStarted = resolve));
  const exited = runProvisioner({
    name: 'test-provisioner',
    flags: { backend: { type: 'string', default: 'memory', usage: 'where volumes live' } },
    argv: ['--logging-format', 'json', ...argv],
    env: {},
    stdout: { write: (l: string) => (stdout += l) },
    stderr: { write: (l: string) => (stderr += l) },
    signal: abort.signal,
    handleSignals: false,
    onStarted: resolveStarted,
    setup,
    ...context,
  });
  const stop = async (): Promise<number> => {
    abort.abort();
    return exited;
  };
  const lines = (): Line[] =>
    stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
  return { exited, stop, started, lines, stdout: () => stdout, stderr: () => stderr };
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/** A cluster of the tier, a kubeconfig file for it, and the runtime's arguments to reach it. */
async function startCluster(
  tier: TierContext,
): Promise<{ cluster: Cluster; read: ObjectReader; api: ReturnType<typeof apiOf>; args: string[] }> {
  const cluster = await tier.start({ nodes: [] });
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-runtime-'));
  tier.defer(() => rm(dir, { recursive: true, force: true }));
  const kubeconfig = await cluster.writeKubeconfig(path.join(dir, 'kubeconfig'));
  return {
    cluster,
    read: new ObjectReader(cluster.kubeConfig),
    api: apiOf(cluster),
    args: ['--kubeconfig', kubeconfig, '--leader-election-namespace', 'default'],
  };
}

describeTiers('runProvisioner', (tier) => {
  it('runs the controller and serves its metrics and health; on stop it gives the Lease up, then runs the clean-ups, and exits 0', async () => {
    const { read, api, args } = await startCluster(tier);
    const cleanups: string[] = [];
    let holderAtCleanup: string | undefined;
    const program = run(
      [...args, '--http-endpoint', '127.0.0.1:0', '--backend', 'disk'],
      ({ options, defer, registry }) => {
        expect(options.backend).toBe('disk');
        new Counter({ name: 'backend_volumes_total', help: 'Volumes of the backend.', registers: [registry] }).inc(7);
        defer(async () => {
          holderAtCleanup = (await read.leases('default'))[0]?.spec?.holderIdentity ?? undefined;
          cleanups.push('first');
        });
        defer(() => cleanups.push('second'));
        return {
          provisionerName: PROVISIONER,
          provisioner,
          healthChecks: { backend: () => undefined },
          readyChecks: {
            backend: () => {
              throw new Error('backend not reachable');
            },
          },
        };
      },
    );
    tier.defer(program.stop);
    const { endpoint, controller } = await program.started;
    expect(endpoint).toBeDefined();
    const url = endpoint!.url;

    await createClass(api, 'standard', PROVISIONER);
    await createClaim(api, 'data', 'standard');
    await waitBound(api, 'data');
    const metrics = await vi.waitFor(async () => {
      const { body } = await get(`${url}/metrics`);
      expect(body).toMatch(/^controller_persistentvolumeclaim_provision_total\{class="standard"[^}]*\} 1$/m);
      return body;
    }, WAIT);
    expect(metrics).toContain('# TYPE process_cpu_user_seconds_total counter\n');
    expect(metrics).toMatch(/^backend_volumes_total 7$/m);
    expect(metrics).toMatch(/^leader_election_master_status\{name="example.com-runtime-test"\} 1$/m);
    expect(await get(`${url}/healthz?verbose`)).toEqual({
      status: 200,
      body: '[+]backend ok\n[+]leader-election ok\nhealthz check passed\n',
    });
    expect(await get(`${url}/healthz/leader-election`)).toEqual({ status: 200, body: 'ok' });
    expect(await get(`${url}/readyz?verbose`)).toEqual({
      status: 500,
      body: '[-]backend failed: backend not reachable\n[+]informers ok\nreadyz check failed\n',
    });
    expect(controller.isLeader()).toBe(true);
    const [held] = await read.leases('default');
    expect(held?.metadata?.name).toBe('example.com-runtime-test');

    expect(await program.stop()).toBe(0);
    // The controller stopped and released the Lease before the clean-ups ran, the latest first.
    expect(holderAtCleanup).toBe('');
    expect(cleanups).toEqual(['second', 'first']);
    expect((await read.leases('default'))[0]?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    const messages = program.lines().map((l) => l.msg);
    expect(messages).toContain('Serving metrics and health checks');
    expect(messages).toContain('Started provisioner controller');
    expect(messages.at(-1)).toBe('Stopped');
    expect(program.stderr()).toBe('');
  });

  it("takes the sidecars' --metrics-address, --metrics-path and --leader-election-labels: the endpoint, its metrics path, the Lease's labels", async () => {
    const { read, api, args } = await startCluster(tier);
    const program = run([
      ...args,
      '--metrics-address=127.0.0.1:0',
      '--metrics-path=/custom/metrics',
      '--leader-election-labels=app.kubernetes.io/name:runtime-test,team:storage',
    ]);
    tier.defer(program.stop);
    const { endpoint } = await program.started;
    const url = endpoint!.url;
    await createClass(api, 'standard', PROVISIONER);
    await createClaim(api, 'data', 'standard');
    await waitBound(api, 'data');
    await vi.waitFor(async () => {
      const { body } = await get(`${url}/custom/metrics`);
      expect(body).toMatch(/^controller_persistentvolumeclaim_provision_total\{class="standard"[^}]*\} 1$/m);
    }, WAIT);
    expect((await get(`${url}/metrics`)).status).toBe(404);
    expect(await get(`${url}/healthz/leader-election`)).toEqual({ status: 200, body: 'ok' });
    const [lease] = await read.leases('default');
    expect(lease?.metadata?.labels).toEqual({ 'app.kubernetes.io/name': 'runtime-test', team: 'storage' });
    expect(await program.stop()).toBe(0);
  });

  it('exits 1 when setup fails, logging why, and runs the clean-ups it registered', async () => {
    const { args } = await startCluster(tier);
    const cleanups: string[] = [];
    const program = run(args, ({ defer }) => {
      defer(() => cleanups.push('registered before the failure'));
      throw new Error('no backend');
    });
    expect(await program.exited).toBe(1);
    expect(cleanups).toEqual(['registered before the failure']);
    expect(program.lines().at(-1)).toEqual({
      ts: expect.any(Number) as number,
      msg: 'Provisioner failed',
      err: 'no backend',
    });
  });

  it('exits 0, logging no failure, when stopped during start-up', async () => {
    const { args } = await startCluster(tier);
    let waiting: () => void = () => undefined;
    const inSetup = new Promise<void>((resolve) => (waiting = resolve));
    const program = run(args, async ({ signal }) => {
      waiting();
      await once(signal, 'abort');
      throw signal.reason;
    });
    await inSetup;
    expect(await program.stop()).toBe(0);
    expect(program.lines().map((l) => l.msg)).toEqual([]);
  });

  it("takes the setup's controller options: without leader election there is no Lease and no leader check", async () => {
    const { read, args } = await startCluster(tier);
    const program = run([...args, '--http-endpoint', '127.0.0.1:0'], () => ({
      provisionerName: PROVISIONER,
      provisioner,
      controller: { leaderElection: false, failedProvisionThreshold: 3 },
    }));
    tier.defer(program.stop);
    const { endpoint } = await program.started;
    expect(await get(`${endpoint!.url}/healthz?verbose`)).toEqual({
      status: 200,
      body: '[+]ping ok\nhealthz check passed\n',
    });
    expect((await get(`${endpoint!.url}/healthz/leader-election`)).status).toBe(404);
    expect(await read.leases('default')).toEqual([]);
    expect(await program.stop()).toBe(0);
  });

  it("reports an option the controller refuses as the setup's controllerError says", async () => {
    const { args } = await startCluster(tier);
    const program = run(args, () => ({
      provisionerName: 'not a name',
      provisioner,
      controllerError: (err) => new Error(`invalid --provisioner-name: ${(err as Error).message}`),
    }));
    expect(await program.exited).toBe(1);
    expect(program.lines().at(-1)?.err).toMatch(
      /^invalid --provisioner-name: ProvisionController: provisionerName "not a name" must have the form/,
    );
  });
});

describeTiers('runProvisioner with a daemon setup', (tier) => {
  it("runs the setup's own run with the endpoint on its paths and checks, no controller and no Lease; exits 0 on stop", async () => {
    const { read, args } = await startCluster(tier);
    let ready = false;
    let running: (endpoint: string) => void = () => undefined;
    const served = new Promise<string>((resolve) => (running = resolve));
    const program = run([...args, '--http-endpoint', '127.0.0.1:0'], ({ kubeConfig, registry, logger }) => {
      const passes = new Counter({ name: 'daemon_passes_total', help: 'Passes of the daemon.', registers: [registry] });
      return {
        metricsPath: '/custom-metrics',
        readyPath: '/ready',
        readyChecks: {
          passes: () => {
            if (!ready) throw new Error('no pass yet');
          },
        },
        run: async (signal, { endpoint }) => {
          // The kubeconfig of the command line reaches the cluster.
          expect(kubeConfig.getCurrentCluster()?.server).toBeDefined();
          passes.inc();
          logger.info({}, 'Daemon running');
          running(endpoint!.url);
          await once(signal, 'abort');
        },
      };
    });
    tier.defer(program.stop);
    const url = await served;
    expect(await get(`${url}/ready`)).toEqual({
      status: 500,
      body: '[-]passes failed: no pass yet\nready check failed\n',
    });
    ready = true;
    expect(await get(`${url}/ready`)).toEqual({ status: 200, body: 'ok' });
    expect(await get(`${url}/ready/passes`)).toEqual({ status: 200, body: 'ok' });
    expect((await get(`${url}/readyz`)).status).toBe(404);
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: 'ok' });
    expect((await get(`${url}/healthz/leader-election`)).status).toBe(404);
    expect((await get(`${url}/metrics`)).status).toBe(404);
    expect((await get(`${url}/custom-metrics`)).body).toMatch(/^daemon_passes_total 1$/m);
    expect(await program.stop()).toBe(0);
    expect(await read.leases('default')).toEqual([]);
    expect(program.lines().map((l) => l.msg)).toEqual([
      'Serving metrics and health checks',
      'Daemon running',
      'Stopped',
    ]);
  });

  it("hands setup a kubeconfig that becomes client-node's KubeConfig, in place, when a method only that class has is called", async () => {
    const { read, args } = await startCluster(tier);
    const seen: { before?: boolean; after?: boolean } = {};
    let wrote: (name: string) => void = () => undefined;
    let failed: (err: unknown) => void = () => undefined;
    const written = new Promise<string>((resolve, reject) => {
      wrote = resolve;
      failed = reject;
    });
    const program = run(args, ({ kubeConfig }) => ({
      run: async (signal) => {
        try {
          seen.before = kubeConfig instanceof KubeConfig;
          const core = kubeConfig.makeApiClient(CoreV1Api);
          seen.after = kubeConfig instanceof KubeConfig;
          const pv = await core.createPersistentVolume({
            body: {
              metadata: { name: 'made-by-setup' },
              spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Mi' }, hostPath: { path: '/nowhere' } },
            },
          });
          wrote(pv.metadata?.name ?? '');
        } catch (err) {
          // The test fails with the error at once rather than waiting for `written` until its timeout.
          failed(err);
          throw err;
        }
        await once(signal, 'abort');
      },
    }));
    tier.defer(program.stop);
    expect(await written).toBe('made-by-setup');
    expect(seen).toEqual({ before: false, after: true });
    expect((await read.volume('made-by-setup'))?.spec?.hostPath?.path).toBe('/nowhere');
    expect(await program.stop()).toBe(0);
  });

  it("exits 1 when the daemon's run fails, logging why", async () => {
    const { args } = await startCluster(tier);
    const program = run(args, () => ({
      run: () => Promise.reject(new Error('disk gone')),
    }));
    expect(await program.exited).toBe(1);
    expect(program.lines().at(-1)).toEqual({
      ts: expect.any(Number) as number,
      msg: 'Provisioner failed',
      err: 'disk gone',
    });
  });
});

// Testkit only: the Lease requests must fail, which only the testkit's fault injection does.
describeTiers(
  'runProvisioner when the Lease is lost',
  (tier) => {
    it('exits 1 with the leadershipLost line', async () => {
      const { cluster, args } = await startCluster(tier);
      const timings = [
        '--leader-election-lease-duration=1s',
        '--leader-election-renew-deadline=500ms',
        '--leader-election-retry-period=100ms',
      ];
      const program = run([...args, ...timings], defaultSetup, {
        messages: { leadershipLost: (logger, err) => logger.error({ reason: err.message }, 'Lost the Lease') },
      });
      tier.defer(program.stop);
      await program.started;
      // Every Lease request fails from now on: renewals miss the deadline.
      cluster.testkit!.faults.add({
        resource: ['leases', 'coordination.k8s.io/leases'],
        action: { type: 'error', code: 500 },
      });
      expect(await program.exited).toBe(1);
      expect(program.lines().at(-1)).toMatchObject({ msg: 'Lost the Lease', reason: expect.any(String) as string });
    });
  },
  { tiers: ['testkit'] },
);

/** A kubeconfig file for a server that is never contacted. */
async function unusedKubeconfig(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kprov-runtime-'));
  cleanupDirs.push(dir);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  const file = path.join(dir, 'kubeconfig');
  await writeFile(file, kc.exportConfig());
  return file;
}

const cleanupDirs: string[] = [];
afterEach(async () => {
  for (const dir of cleanupDirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('runProvisioner before the controller', () => {
  it('prints the help on stdout with exit code 0, and a usage error on stderr with exit code 2, logging nothing', async () => {
    const help = run(['--help']);
    expect(await help.exited).toBe(0);
    expect(help.stdout()).toMatch(/^Usage of test-provisioner:\n/);
    expect(help.stdout()).toContain('  -backend string\n    \twhere volumes live (default "memory")\n');
    expect(help.stderr()).toBe('');
    const bad = run(['--bogus']);
    expect(await bad.exited).toBe(2);
    expect(bad.stderr()).toMatch(/^flag provided but not defined: -bogus\nUsage of test-provisioner:\n/);
    expect(bad.stdout()).toBe('');
  });

  it('runs preflight before loading the kubeconfig: its failure is the one reported, and setup is not called', async () => {
    const seen: string[] = [];
    const code = await runProvisioner({
      name: 'test-provisioner',
      argv: ['--kubeconfig', '/nonexistent/kubeconfig', '--logging-format', 'json'],
      env: {},
      stdout: { write: (l: string) => seen.push(`logged: ${String((JSON.parse(l) as Line).err)}`) },
      handleSignals: false,
      preflight: ({ options, common }) => {
        expect(options).toEqual({});
        seen.push(`preflight with --kubeconfig ${String(common.kubeconfig)}`);
        throw new Error('no such directory');
      },
      setup: () => {
        seen.push('setup');
        return { provisionerName: PROVISIONER, provisioner };
      },
    });
    expect(code).toBe(1);
    expect(seen).toEqual(['preflight with --kubeconfig /nonexistent/kubeconfig', 'logged: no such directory']);
    // Without preflight, the kubeconfig is what fails.
    const program = run(['--kubeconfig', '/nonexistent/kubeconfig']);
    expect(await program.exited).toBe(1);
    expect(program.lines().at(-1)?.err).toMatch(/^cannot load kubeconfig "\/nonexistent\/kubeconfig"/);
  });

  it('sets the client-side rate limit from the common options (none for a negative QPS)', async () => {
    const kubeconfig = await unusedKubeconfig();
    const limiters: (RequestRateLimiter | undefined)[] = [];
    const grab: Setup = ({ kubeConfig }) => {
      limiters.push(clientRateLimiter(kubeConfig));
      throw new Error('done');
    };
    expect(await run(['--kubeconfig', kubeconfig, '--kube-api-qps', '2', '--kube-api-burst', '3'], grab).exited).toBe(
      1,
    );
    expect(await run(['--kubeconfig', kubeconfig], grab).exited).toBe(1);
    expect(await run(['--kubeconfig', kubeconfig, '--kube-api-qps', '-1'], grab).exited).toBe(1);
    const [limited, defaults, none] = limiters as [TokenBucketRateLimiter, TokenBucketRateLimiter, undefined];
    expect({ qps: limited.qps, burst: limited.burst }).toEqual({ qps: 2, burst: 3 });
    expect({ qps: defaults.qps, burst: defaults.burst }).toEqual({ qps: 5, burst: 10 });
    expect(none).toBeUndefined();
  });

  it('skips the files of $KUBECONFIG that do not exist, as client-go does, and goes on to ~/.kube/config when none does', async () => {
    const kubeconfig = await unusedKubeconfig();
    const home = path.dirname(await unusedKubeconfig());
    await mkdir(path.join(home, '.kube'));
    await copyFile(kubeconfig, path.join(home, '.kube', 'config'));
    const servers: (string | undefined)[] = [];
    const grab: Setup = ({ kubeConfig }) => {
      servers.push(kubeConfig.getCurrentCluster()?.server);
      throw new Error('done');
    };
    const missing = '/nonexistent/kubeconfig';
    const withEnv = (env: Record<string, string>) => run([], grab, { env }).exited;
    expect(await withEnv({ KUBECONFIG: `${missing}${path.delimiter}${kubeconfig}`, HOME: '/nonexistent' })).toBe(1);
    expect(await withEnv({ KUBECONFIG: missing, HOME: home })).toBe(1);
    expect(servers).toEqual(['https://127.0.0.1:1', 'https://127.0.0.1:1']);
    // An explicit --kubeconfig must exist, as client-go's explicit path.
    const program = run(['--kubeconfig', missing], grab, { env: { HOME: home } });
    expect(await program.exited).toBe(1);
    expect(program.lines().at(-1)?.err).toMatch(/^cannot load kubeconfig "\/nonexistent\/kubeconfig"/);
    expect(servers).toHaveLength(2);
  });

  it("takes the binary's own parser: its exit results as given, its common options acted on, the binary's log lines", async () => {
    const kubeconfig = await unusedKubeconfig();
    const outputs: string[] = [];
    const sink = { write: (l: string) => outputs.push(l) };
    const parser = (argv: readonly string[]) => {
      if (argv[0] === 'version') return { kind: 'exit' as const, code: 0, stdout: 'v1\n' };
      if (argv[0] !== 'start') return { kind: 'exit' as const, code: 3, stderr: 'say start\n' };
      return {
        kind: 'run' as const,
        common: { kubeconfig, verbosity: 4, loggingFormat: 'json' as const },
        options: { debug: true },
      };
    };
    const base = { name: 'own', flags: parser, env: {}, stdout: sink, stderr: sink, handleSignals: false };
    const fail = (): never => {
      throw new Error('no backend');
    };
    expect(await runProvisioner({ ...base, argv: ['version'], setup: fail })).toBe(0);
    expect(await runProvisioner({ ...base, argv: ['stop'], setup: fail })).toBe(3);
    expect(outputs).toEqual(['v1\n', 'say start\n']);
    outputs.length = 0;
    const code = await runProvisioner({
      ...base,
      argv: ['start'],
      messages: { failed: (logger, err) => logger.error({}, `Error starting daemon: ${(err as Error).message}`) },
      setup: ({ options, logger }) => {
        expect(options.debug).toBe(true);
        logger.debug({}, 'debug is on');
        throw new Error('no backend');
      },
    });
    expect(code).toBe(1);
    expect(outputs.map((l) => (JSON.parse(l) as Line).msg)).toEqual([
      'debug is on',
      'Error starting daemon: no backend',
    ]);
  });
});
