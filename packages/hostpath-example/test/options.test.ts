/** The command line: flags, environment fallbacks, validation, help, and `main()`'s exit codes before it runs. */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main.js';
import { tempDir } from './helpers.js';
import {
  COMMON_DEFAULTS,
  COMMON_FLAGS,
  resolveCommonOptions,
  type CommonOptions,
} from '@kprov/provisioner-lib/runtime';
import { FLAGS, HELP, parseOptions, type CliOptions } from '../src/options.js';

const NODE = { NODE_NAME: 'node-1' };

function parsed(argv: string[], env: Record<string, string | undefined> = NODE): CliOptions {
  const result = parseOptions(argv, env);
  if (result.kind !== 'run') throw new Error(`unexpected ${result.kind}: ${JSON.stringify(result)}`);
  return result.options;
}

function usageError(
  argv: string[],
  env: Record<string, string | undefined> = NODE,
): { message: string; exitCode: number } {
  const result = parseOptions(argv, env);
  if (result.kind === 'error') return result;
  throw new Error('expected a usage error');
}

async function run(
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, env, {
    handleSignals: false,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  });
  return { code, stdout, stderr };
}

describe('parseOptions', () => {
  it('has the documented defaults', () => {
    expect(parsed([])).toEqual({
      kubeconfig: undefined,
      provisionerName: 'example.com/hostpath',
      pvDir: '/tmp/hostpath-provisioner',
      nodeName: 'node-1',
      hostRoot: '/',
      leaderElection: true,
      leaderElectionNamespace: undefined,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: true,
      httpEndpoint: undefined,
      loggingFormat: 'text',
      verbosity: 0,
    });
  });

  it('reads the environment, and flags win over it', () => {
    const env = { NODE_NAME: 'env-node', PV_DIR: '/env/pv', HOST_ROOT: '/host', KUBECONFIG: '/env/kubeconfig' };
    expect(parsed([], env)).toMatchObject({
      nodeName: 'env-node',
      pvDir: '/env/pv',
      hostRoot: '/host',
      kubeconfig: '/env/kubeconfig',
    });
    expect(
      parsed(
        ['--node-name', 'flag-node', '--pv-dir=/flag/pv', '--host-root', '/', '--kubeconfig', '/flag/kubeconfig'],
        env,
      ),
    ).toMatchObject({ nodeName: 'flag-node', pvDir: '/flag/pv', hostRoot: '/', kubeconfig: '/flag/kubeconfig' });
    expect(parsed([], { ...NODE, PV_DIR: '', KUBECONFIG: '' })).toMatchObject({
      pvDir: '/tmp/hostpath-provisioner',
      kubeconfig: undefined,
    });
  });

  it('parses every flag', () => {
    expect(
      parsed([
        '--provisioner-name=example.org/other',
        '--no-leader-election',
        '--leader-election-namespace',
        'kube-system',
        '--leader-election-lease-duration=1m30s',
        '--leader-election-renew-deadline=1m',
        '--leader-election-retry-period=500ms',
        '--no-leader-election-release-on-cancel',
        '--http-endpoint',
        ':8080',
        '--logging-format',
        'json',
        '-v',
        '4',
      ]),
    ).toMatchObject({
      provisionerName: 'example.org/other',
      leaderElection: false,
      leaderElectionNamespace: 'kube-system',
      leaseDurationMs: 90_000,
      renewDeadlineMs: 60_000,
      retryPeriodMs: 500,
      releaseOnCancel: false,
      httpEndpoint: { host: '0.0.0.0', port: 8080 },
      loggingFormat: 'json',
      verbosity: 4,
    });
  });

  it('accepts Go flag spellings', () => {
    expect(parsed(['--leader-election=false']).leaderElection).toBe(false);
    expect(parsed(['--leader-election=true']).leaderElection).toBe(true);
    expect(parsed(['--leader-election']).leaderElection).toBe(true);
    expect(parsed(['--leader-election-release-on-cancel=false']).releaseOnCancel).toBe(false);
    expect(parsed(['--leader-election-release-on-cancel=true']).releaseOnCancel).toBe(true);
    expect(parsed(['--leader-election-release-on-cancel']).releaseOnCancel).toBe(true);
    expect(parsed(['-v=5']).verbosity).toBe(5);
    expect(parsed(['--v=3']).verbosity).toBe(3);
    expect(parsed(['-v2']).verbosity).toBe(2);
  });

  it('parses --http-endpoint forms', () => {
    expect(parsed(['--http-endpoint', '127.0.0.1:9090']).httpEndpoint).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(parsed(['--http-endpoint', '[::1]:0']).httpEndpoint).toEqual({ host: '::1', port: 0 });
    expect(parsed(['--http-endpoint', 'localhost:80']).httpEndpoint).toEqual({ host: 'localhost', port: 80 });
  });

  it('names the flag in validation errors', () => {
    const cases: [string[], string][] = [
      [['--pv-dir', 'relative'], '--pv-dir must be an absolute path, got "relative"'],
      [['--pv-dir', '/'], '--pv-dir must not be "/"'],
      [['--host-root', 'host'], '--host-root must be an absolute path, got "host"'],
      [['--http-endpoint', '8080'], '--http-endpoint must be ADDR:PORT'],
      [['--http-endpoint', ':99999'], '--http-endpoint must be ADDR:PORT'],
      [['--logging-format', 'xml'], '--logging-format must be "text" or "json", got "xml"'],
      [['-v', 'high'], '-v must be a non-negative integer, got "high"'],
      [['--provisioner-name', ''], '--provisioner-name must not be empty'],
      [['--leader-election-namespace', ''], '--leader-election-namespace must not be empty'],
      [['--leader-election-lease-duration', '15'], '--leader-election-lease-duration must be a duration'],
      [['--leader-election-retry-period', '0s'], '--leader-election-retry-period must be greater than zero'],
      [
        ['--leader-election-lease-duration', '5s'],
        '--leader-election-lease-duration must be longer than --leader-election-renew-deadline',
      ],
      [
        ['--leader-election-retry-period', '9s'],
        '--leader-election-renew-deadline must be longer than 1.2 × --leader-election-retry-period',
      ],
      [
        ['--leader-election', '--no-leader-election'],
        '--leader-election and --no-leader-election contradict each other',
      ],
      [
        ['--leader-election-release-on-cancel', '--no-leader-election-release-on-cancel'],
        '--leader-election-release-on-cancel and --no-leader-election-release-on-cancel contradict each other',
      ],
    ];
    for (const [argv, message] of cases) {
      const err = usageError(argv);
      expect(err.message, argv.join(' ')).toContain(message);
      expect(err.exitCode).toBe(1);
    }
  });

  it('reports unparsable command lines with exit code 2', () => {
    for (const argv of [['--bogus'], ['--pv-dir'], ['positional']]) {
      const err = usageError(argv);
      expect(err.exitCode, argv.join(' ')).toBe(2);
      expect(err.message).toContain('(see --help)');
    }
  });

  it('requires the node name, saying how to set it', () => {
    const err = usageError([], {});
    expect(err.message).toContain('set the NODE_NAME environment variable');
    expect(err.message).toContain('spec.nodeName');
    expect(usageError([], { NODE_NAME: '' }).message).toContain('NODE_NAME');
    // A wrong flag is reported first.
    expect(usageError(['--pv-dir', 'x'], {}).message).toContain('--pv-dir');
  });

  it('lists every flag with its default in --help', () => {
    expect(parseOptions(['--help'], {})).toEqual({ kind: 'help', text: HELP });
    expect(parseOptions(['-h'], {})).toEqual({ kind: 'help', text: HELP });
    for (const flag of [
      '--kubeconfig',
      '--provisioner-name',
      '--pv-dir',
      '--node-name',
      '--host-root',
      '--leader-election ',
      '--no-leader-election',
      '--leader-election-namespace',
      '--leader-election-lease-duration',
      '--leader-election-renew-deadline',
      '--leader-election-retry-period',
      '--leader-election-release-on-cancel',
      '--no-leader-election-release-on-cancel',
      '--http-endpoint',
      '--logging-format',
      '-v, --v',
      '-h, --help',
    ]) {
      expect(HELP, flag).toContain(flag);
    }
    for (const text of [
      'default "example.com/hostpath"',
      'default "/tmp/hostpath-provisioner"',
      'default "/"',
      '(default true)',
      'default 15s',
      'default 10s',
      'default 2s',
      '(default: off)',
      'default "text"',
      '(default 0)',
      'env KUBECONFIG',
      'env PV_DIR',
      'env NODE_NAME',
      'env HOST_ROOT',
    ]) {
      expect(HELP, text).toContain(text);
    }
  });
});

describe("the runtime's common flags", () => {
  function common(argv: string[], env: Record<string, string | undefined> = NODE): CommonOptions {
    const result = parseOptions(argv, env);
    if (result.kind !== 'run') throw new Error(`unexpected ${result.kind}: ${JSON.stringify(result)}`);
    return result.common;
  }

  it("come with the binary's flags, with the runtime's defaults", () => {
    const defaults = resolveCommonOptions(common([]));
    expect(defaults).toMatchObject({
      kubeApiQps: COMMON_DEFAULTS.kubeApiQps,
      kubeApiBurst: COMMON_DEFAULTS.kubeApiBurst,
      workerThreads: COMMON_DEFAULTS.workerThreads,
      metricsPath: '/metrics',
    });
    expect(defaults.leaderElectionLabels).toBeUndefined();
    expect(
      common([
        '--kube-api-qps',
        '20',
        '--kube-api-burst=40',
        '--worker-threads',
        '8',
        '--leader-election-labels',
        'team:storage,tier:example',
        '--metrics-path=/custom-metrics',
      ]),
    ).toMatchObject({
      kubeApiQps: 20,
      kubeApiBurst: 40,
      workerThreads: 8,
      leaderElectionLabels: { team: 'storage', tier: 'example' },
      metricsPath: '/custom-metrics',
    });
    expect(common(['--kube-api-qps=-1']).kubeApiQps).toBe(-1);
  });

  it('are the options the binary runs with, the documented ones included', () => {
    const argv = ['--no-leader-election', '--leader-election-lease-duration=1m', '--http-endpoint', ':9090', '-v', '3'];
    expect(common(argv)).toMatchObject({
      leaderElection: false,
      leaseDurationMs: 60_000,
      httpEndpoint: { host: '0.0.0.0', port: 9090 },
      verbosity: 3,
    });
  });

  it('name the flag in validation errors, with exit code 1', () => {
    const cases: [string[], string][] = [
      [['--worker-threads', '0'], '--worker-threads must be greater than zero, got "0"'],
      [['--worker-threads', 'many'], '--worker-threads must be a non-negative integer, got "many"'],
      [['--kube-api-qps', 'fast'], '--kube-api-qps must be a number, got "fast"'],
      [['--kube-api-burst=-1'], '--kube-api-burst must not be negative, got "-1"'],
      [['--metrics-path', 'metrics'], '--metrics-path must start with "/", got "metrics"'],
      [['--leader-election-labels', 'team=storage'], '--leader-election-labels malformed item in list of labels'],
      [['--leader-election=maybe'], '--leader-election must be true or false, got "maybe"'],
    ];
    for (const [argv, message] of cases) {
      const err = usageError(argv);
      expect(err.message, argv.join(' ')).toContain(message);
      expect(err.exitCode).toBe(1);
    }
  });

  it('name the environment variable a wrong value came from', () => {
    expect(usageError([], { ...NODE, PV_DIR: 'relative' }).message).toBe(
      '--pv-dir must be an absolute path, got "relative" (from PV_DIR)',
    );
  });

  it('are all in --help, and --help names no flag that is not one', () => {
    for (const name of Object.keys(FLAGS)) {
      expect(HELP, name).toMatch(new RegExp(`\\s${name.length === 1 ? '-' : '--'}${name}[\\s,]`));
    }
    const named = new Set([...HELP.matchAll(/(?<=\s)--?([a-z][a-z-]*)/g)].map((m) => m[1]!.replace(/^no-/, '')));
    for (const name of named) expect(Object.hasOwn(FLAGS, name) || name === 'help' || name === 'h', name).toBe(true);
    // The sidecars' deprecated name of --http-endpoint is the one common flag left out.
    expect(Object.keys(COMMON_FLAGS).filter((name) => !Object.hasOwn(FLAGS, name))).toEqual(['metrics-address']);
  });

  it('prints the program and its version for --version, exit code 0', async () => {
    const version = (
      JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
    expect(await run(['--version'], {})).toEqual({ code: 0, stdout: `kprov-hostpath ${version}\n`, stderr: '' });
  });
});

describe('main before running', () => {
  it('prints help on stdout and returns 0', async () => {
    expect(await run(['--help'], {})).toEqual({ code: 0, stdout: HELP, stderr: '' });
  });

  it('returns 1 without NODE_NAME, saying to set it', async () => {
    const { code, stderr, stdout } = await run([], {});
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^kprov-hostpath: the node name is required: set the NODE_NAME environment variable .*spec\.nodeName/,
    );
  });

  it('returns 2 for an unknown flag', async () => {
    const { code, stderr } = await run(['--nope'], NODE);
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--nope'");
  });

  it('returns 1 for a host root that is not a directory, naming the flag', async () => {
    const { code, stdout } = await run(
      ['--host-root', '/nonexistent-kprov-host-root', '--kubeconfig', '/nonexistent'],
      NODE,
    );
    expect(code).toBe(1);
    expect(stdout).toContain('--host-root \\"/nonexistent-kprov-host-root\\" (HOST_ROOT) is not a directory');
  });

  it('returns 1 for an unreadable kubeconfig, naming it', async () => {
    const { code, stdout } = await run(['--kubeconfig', '/nonexistent/kubeconfig', '--logging-format', 'json'], NODE);
    expect(code).toBe(1);
    const line = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: 'Provisioner failed' });
    expect(line.err).toContain('cannot load kubeconfig "/nonexistent/kubeconfig"');
    expect(typeof line.ts).toBe('number');
    expect(line).not.toHaveProperty('v');
  });

  it('returns 1 for an invalid provisioner name, naming the flag', async () => {
    const { dir, cleanup } = await tempDir('kprov-hostpath-options-');
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      await writeFile(
        kubeconfig,
        'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]\n' +
          'users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
      );
      const { code, stdout } = await run(['--provisioner-name', 'not a name', '--kubeconfig', kubeconfig], NODE);
      expect(code).toBe(1);
      expect(stdout).toContain(
        'invalid --provisioner-name: ProvisionController: provisionerName \\"not a name\\" must have the form',
      );
    } finally {
      await cleanup();
    }
  });
});
