/**
 * A minimal binary on the runtime (`program/minimal-provisioner.ts`, the built library), run as a child process as a
 * user runs it: its flags and exit codes, its health endpoint, a claim provisioned, and SIGTERM giving the Lease up
 * and exiting 0; a second SIGTERM during the graceful stop ends it at once. On both tiers.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ObjectReader } from '@kprov/testkit';
import { load as loadYaml } from 'js-yaml';
import { describeTiers } from '@kprov/testkit/vitest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { apiOf, createClaim, createClass, waitBound, WAIT } from '../support/cluster.js';
import { Program, type ProgramLine } from '../support/program.js';

const SCRIPT = fileURLToPath(new URL('program/minimal-provisioner.ts', import.meta.url));
/** Preloaded into the program to record the modules it loads. */
const MODULE_TRACE = fileURLToPath(new URL('../support/module-trace.ts', import.meta.url));
/** The guide's example (docs/provisioner-lib.md), a binary of about 30 lines. */
const EXAMPLE = fileURLToPath(new URL('../../examples/hostpath.ts', import.meta.url));
/** The environment of the program: nothing that could set one of its flags. */
const ENV = { PATH: process.env.PATH ?? '' };

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

const messages = (program: Program): unknown[] => program.lines.map((l) => l.msg ?? l.text);

describe('a binary on the runtime, before it runs', () => {
  const programs: Program[] = [];
  afterEach(async () => {
    for (const p of programs.splice(0)) await p.dispose();
  });

  it('prints its help with exit code 0, and exits 2 for a flag it does not have or a missing required one', async () => {
    const help = new Program(SCRIPT, ['--help'], ENV);
    programs.push(help);
    expect(await help.exited).toEqual({ code: 0, signal: null });
    expect(help.lines[0]).toEqual({ text: 'A minimal provisioner: one directory under --root per volume.' });
    expect(messages(help)).toContain('  -root directory');
    expect(messages(help)).toContain('  -leader-election-release-on-cancel');

    const unknown = new Program(SCRIPT, ['--root', '/tmp', '--no-such-flag'], ENV);
    const missing = new Program(SCRIPT, [], ENV);
    programs.push(unknown, missing);
    expect(await unknown.exited).toEqual({ code: 2, signal: null });
    expect(await missing.exited).toEqual({ code: 2, signal: null });
    expect(unknown.lines).toEqual([]);
  });

  it("runs the guide's example: its --help lists its flag beside the common ones", async () => {
    const example = new Program(EXAMPLE, ['--help'], ENV);
    programs.push(example);
    expect(await example.exited).toEqual({ code: 0, signal: null });
    expect(messages(example)[0]).toBe('Usage of example-hostpath:');
    expect(messages(example)).toContain('  -root string');
    expect(messages(example)).toContain('    \tdirectory holding the volumes (default "/var/lib/example-hostpath")');
    expect(messages(example)).toContain('  -kube-api-qps float');
  });

  it("in a pod without its service account's files, exits 1 naming the missing one, having loaded no YAML parser", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kprov-runtime-pod-'));
    const trace = path.join(dir, 'modules.txt');
    // A pod's environment (no kubeconfig file anywhere: HOME has none), on a machine that is not a pod.
    const env = {
      ...ENV,
      HOME: dir,
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      NODE_OPTIONS: `--import ${MODULE_TRACE}`,
      KPROV_MODULE_TRACE: trace,
    };
    const pod = new Program(SCRIPT, ['--root', dir, '--logging-format', 'json'], env);
    programs.push(pod);
    try {
      expect(await pod.exited).toEqual({ code: 1, signal: null });
      expect(pod.find('Provisioner failed')[0]?.err).toContain('/var/run/secrets/kubernetes.io/serviceaccount/');
      // A service account's configuration is a few files, not YAML: a pod does not pay for a parser.
      const modules = (await readFile(trace, 'utf8')).split('\n');
      expect(modules.some((url) => url.includes('/runtime'))).toBe(true);
      expect(modules.filter((url) => url.includes('yaml'))).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeTiers('a binary on the runtime', (tier) => {
  /** The program against a cluster of the tier, killed after the test if it still runs. */
  async function start(
    extra: string[] = [],
    { env = ENV, user }: { env?: NodeJS.ProcessEnv; user?: Record<string, unknown> } = {},
  ): Promise<{ program: Program; read: ObjectReader; api: ReturnType<typeof apiOf>; root: string }> {
    const cluster = await tier.start({ nodes: [] });
    const root = await mkdtemp(path.join(tmpdir(), 'kprov-runtime-binary-'));
    tier.defer(() => rm(root, { recursive: true, force: true }));
    const kubeconfig = await cluster.writeKubeconfig(path.join(root, 'kubeconfig'));
    if (user !== undefined) {
      // The tier's user, with what `user` adds (an auth-provider, say).
      const config = loadYaml(await readFile(kubeconfig, 'utf8')) as { users: { user: Record<string, unknown> }[] };
      for (const entry of config.users) Object.assign(entry.user, user);
      await writeFile(kubeconfig, JSON.stringify(config));
    }
    const args = [
      '--kubeconfig',
      kubeconfig,
      '--root',
      root,
      '--http-endpoint',
      '127.0.0.1:0',
      '--logging-format',
      'json',
      '--leader-election-namespace',
      'default',
    ];
    const program = new Program(SCRIPT, [...args, ...extra], env);
    tier.defer(() => program.dispose());
    await program.until((p) => p.count('Started provisioner controller') === 1, 'the controller started');
    return { program, read: new ObjectReader(cluster.kubeConfig), api: apiOf(cluster), root };
  }

  const serving = (program: Program): ProgramLine => program.find('Serving metrics and health checks')[0]!;

  it('serves its health checks, provisions, and on SIGTERM gives the Lease up and exits 0', async () => {
    const { program, read, api, root } = await start();
    const url = serving(program).url as string;
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: 'ok' });
    await vi.waitFor(async () => expect(await get(`${url}/readyz`)).toEqual({ status: 200, body: 'ok' }), WAIT);

    await createClass(api, 'minimal', 'example.com/minimal');
    const claim = await createClaim(api, 'data', 'minimal');
    await waitBound(api, 'data');
    expect(existsSync(path.join(root, `pvc-${claim.metadata!.uid!}`))).toBe(true);
    const [held] = await read.leases('default');
    expect(held?.metadata?.name).toBe('example.com-minimal');
    expect(held?.spec?.holderIdentity).not.toBe('');

    program.kill('SIGTERM');
    expect(await program.exited).toEqual({ code: 0, signal: null });
    expect((await read.leases('default'))[0]?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(program.find('Received signal, shutting down')).toEqual([expect.objectContaining({ signal: 'SIGTERM' })]);
    // The clean-ups run after the controller stopped.
    expect(messages(program).slice(-2)).toEqual(['Stopped', 'Stop delay']);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it("authenticates with a token file, as a pod's service account does, without loading client-node's generated client", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kprov-runtime-token-'));
    tier.defer(() => rm(dir, { recursive: true, force: true }));
    const tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, 'a-token');
    const trace = path.join(dir, 'modules.txt');
    // The auth-provider of the runtime's in-cluster configuration: client-node's FileAuth reads the token.
    const user = { 'auth-provider': { name: 'tokenFile', config: { tokenFile } } };
    const env = { ...ENV, NODE_OPTIONS: `--import ${MODULE_TRACE}`, KPROV_MODULE_TRACE: trace };
    const { program, api } = await start([], { env, user });
    await createClass(api, 'minimal', 'example.com/minimal');
    await createClaim(api, 'data', 'minimal');
    await waitBound(api, 'data');
    program.kill('SIGTERM');
    expect(await program.exited).toEqual({ code: 0, signal: null });

    const clientNode = (await readFile(trace, 'utf8'))
      .split('\n')
      .map((url) => /@kubernetes\/client-node\/dist\/(.*)$/.exec(url)?.[1])
      .filter((m) => m !== undefined);
    expect(clientNode).toContain('file_auth.js');
    // client-node's config.js (KubeConfig) imports its whole generated client and undici; OpenID Connect's
    // authenticator imports config.js.
    expect(clientNode).not.toContain('config.js');
    expect(clientNode).not.toContain('oidc_auth.js');
    expect(clientNode).not.toContain('index.js');
  });

  it("serves prom-client's process metrics without loading OpenTelemetry's API", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kprov-runtime-metrics-'));
    tier.defer(() => rm(dir, { recursive: true, force: true }));
    const trace = path.join(dir, 'modules.txt');
    const env = { ...ENV, NODE_OPTIONS: `--import ${MODULE_TRACE}`, KPROV_MODULE_TRACE: trace };
    const { program } = await start([], { env });
    const { status, body } = await get(`${serving(program).url as string}/metrics`);
    expect(status).toBe(200);
    const cpu = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
    expect(cpu('process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(cpu('process_cpu_seconds_total')).toBeCloseTo(
      cpu('process_cpu_user_seconds_total') + cpu('process_cpu_system_seconds_total'),
      6,
    );
    for (const metric of ['process_start_time_seconds', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes'])
      expect(body).toMatch(new RegExp(`^${metric} `, 'm'));
    program.kill('SIGTERM');
    expect(await program.exited).toEqual({ code: 0, signal: null });
    // prom-client's own CPU counters load it, for exemplars: 1.2 MiB of a provisioner's memory when ready.
    expect((await readFile(trace, 'utf8')).split('\n').filter((url) => url.includes('@opentelemetry'))).toEqual([]);
  });

  it('ends at once on a second SIGTERM during the graceful stop, the Lease already given up', async () => {
    const { program, read } = await start(['--stop-delay', '10m']);
    program.kill('SIGTERM');
    await program.until((p) => p.count('Stop delay') === 1, 'the graceful stop reached its clean-ups');
    expect((await read.leases('default'))[0]?.spec?.holderIdentity).toBe('');
    program.kill('SIGTERM');
    expect(await program.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
