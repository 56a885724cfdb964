/** The runtime's command line: the common flags with their defaults, a binary's flags beside them, help and usage errors. */
import { describe, expect, it } from 'vitest';
import { flagsCommandLine, type CommandLine } from '../../src/runtime/command-line.js';
import { COMMON_FLAGS, commonOptionsOf } from '../../src/runtime/common-flags.js';
import {
  COMMON_DEFAULTS,
  pickCommonOptions,
  resolveCommonOptions,
  type CommonOptions,
} from '../../src/runtime/common-options.js';
import type { FlagTable } from '../../src/runtime/flag-table.js';
import { completeFlagValues, type ParsedValue } from '../../src/runtime/go-flags.js';

const OWN = {
  root: { type: 'string', env: 'ROOT', default: '/srv', usage: 'the `directory` of the volumes' },
  'node-name': { type: 'string', env: 'NODE_NAME', usage: 'this node' },
} as const satisfies FlagTable;

const parse = flagsCommandLine(OWN, { name: 'prog', description: 'A provisioner.' });

function run(argv: string[], env: Record<string, string> = {}): { common: CommonOptions; options: unknown } {
  const result = parse(argv, env);
  if (result.kind !== 'run') throw new Error(`expected run, got ${JSON.stringify(result)}`);
  return result;
}

function exit(argv: string[]): Extract<CommandLine<unknown>, { kind: 'exit' }> {
  const result = parse(argv, {});
  if (result.kind !== 'exit') throw new Error('expected exit');
  return result;
}

describe('flagsCommandLine', () => {
  it("gives the common options their defaults, the sidecars', and the binary's options theirs", () => {
    expect(run([])).toEqual({
      kind: 'run',
      common: {
        kubeconfig: undefined,
        leaderElection: true,
        leaderElectionNamespace: undefined,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        releaseOnCancel: true,
        leaderElectionLabels: undefined,
        httpEndpoint: undefined,
        metricsPath: '/metrics',
        kubeApiQps: 5,
        kubeApiBurst: 10,
        workerThreads: 4,
        loggingFormat: 'text',
        verbosity: 0,
      },
      options: { root: '/srv', 'node-name': undefined },
    });
    expect(resolveCommonOptions(run([]).common)).toEqual({
      ...COMMON_DEFAULTS,
      kubeconfig: undefined,
      leaderElectionNamespace: undefined,
      leaderElectionLabels: undefined,
      httpEndpoint: undefined,
    });
  });

  it('reads every common flag', () => {
    const { common } = run([
      '--kubeconfig=/k',
      '--leader-election=false',
      '--leader-election-namespace',
      'ns',
      '--leader-election-lease-duration=30s',
      '--leader-election-renew-deadline=20s',
      '--leader-election-retry-period=5s',
      '--leader-election-release-on-cancel=false',
      '--leader-election-labels=app.kubernetes.io/name:hostpath,tier:',
      '--http-endpoint=[::1]:9090',
      '--metrics-path=/custom/metrics',
      '--kube-api-qps=0.5',
      '--kube-api-burst=3',
      '--worker-threads=16',
      '--logging-format=json',
      '-v=5',
    ]);
    expect(common).toEqual({
      kubeconfig: '/k',
      leaderElection: false,
      leaderElectionNamespace: 'ns',
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 5_000,
      releaseOnCancel: false,
      leaderElectionLabels: { 'app.kubernetes.io/name': 'hostpath', tier: '' },
      httpEndpoint: { host: '::1', port: 9090 },
      metricsPath: '/custom/metrics',
      kubeApiQps: 0.5,
      kubeApiBurst: 3,
      workerThreads: 16,
      loggingFormat: 'json',
      verbosity: 5,
    });
    expect(run(['--http-endpoint', ':8080']).common.httpEndpoint).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(run(['--kube-api-qps=-1']).common.kubeApiQps).toBe(-1);
    expect(run(['--leader-election-labels=']).common.leaderElectionLabels).toBeUndefined();
  });

  it('reads the deprecated --metrics-address as the sidecars do: the endpoint, under its older name', () => {
    expect(run(['--metrics-address', ':9090']).common.httpEndpoint).toEqual({ host: '0.0.0.0', port: 9090 });
  });

  it('prints the program and its version for --version, exit code 0, whatever other flags say', () => {
    expect(exit(['--version'])).toEqual({ kind: 'exit', code: 0, stdout: 'prog unknown\n' });
    const versioned = flagsCommandLine(OWN, { name: 'prog', version: 'v1.2.3' });
    expect(versioned(['--leader-election-renew-deadline=20s', '-version'], {})).toEqual({
      kind: 'exit',
      code: 0,
      stdout: 'prog v1.2.3\n',
    });
  });

  it("reads the binary's flags, with their environment variables", () => {
    expect(run(['--root', '/data'], { NODE_NAME: 'n1' }).options).toEqual({ root: '/data', 'node-name': 'n1' });
    expect(run([], { ROOT: '/env' }).options).toEqual({ root: '/env', 'node-name': undefined });
  });

  it('prints the description and the usage for --help, exit code 0', () => {
    const help = exit(['-v=1', '--help']);
    expect(help.code).toBe(0);
    expect(help.stderr).toBeUndefined();
    expect(help.stdout).toMatch(/^A provisioner\.\n\nUsage of prog:\n {2}-http-endpoint address\n/);
    expect(help.stdout).toContain(
      '  -root directory\n    \tthe directory of the volumes (env ROOT) (default "/srv")\n',
    );
    expect(help.stdout).toContain(
      '  -leader-election-lease-duration duration\n    \tHow long a Lease lasts without renewal. (default 15s)\n',
    );
    for (const flag of [...Object.keys(COMMON_FLAGS), ...Object.keys(OWN)])
      expect(help.stdout).toContain(`\n  -${flag}`);
  });

  it('prints the message and the usage on stderr for a command line it cannot use, exit code 2', () => {
    const cases: [string[], string][] = [
      [['--bogus'], 'flag provided but not defined: -bogus'],
      [['--kube-api-qps', 'fast'], 'invalid value "fast" for flag -kube-api-qps: parse error'],
      [['--kube-api-burst=-1'], 'invalid value "-1" for flag -kube-api-burst: must not be negative'],
      [['--worker-threads=0'], 'invalid value "0" for flag -worker-threads: must be greater than zero'],
      [['--logging-format=xml'], 'invalid value "xml" for flag -logging-format: want "text" or "json"'],
      [
        ['--http-endpoint=8080'],
        'invalid value "8080" for flag -http-endpoint: want ADDR:PORT, such as ":8080" or "127.0.0.1:8080"',
      ],
      [
        ['--leader-election-retry-period=0s'],
        'invalid value "0s" for flag -leader-election-retry-period: must be greater than zero',
      ],
      [
        ['--leader-election-renew-deadline=15s'],
        '-leader-election-lease-duration must be longer than -leader-election-renew-deadline',
      ],
      [
        ['--leader-election-retry-period=9s'],
        '-leader-election-renew-deadline must be longer than 1.2 × -leader-election-retry-period',
      ],
      [['-v=-1'], 'invalid value "-1" for flag -v: must not be negative'],
      [
        ['--metrics-address=:9090', '--http-endpoint=:8080'],
        'only one of -metrics-address and -http-endpoint can be set',
      ],
      [
        ['--metrics-address=9090'],
        'invalid value "9090" for flag -metrics-address: want ADDR:PORT, such as ":8080" or "127.0.0.1:8080"',
      ],
      [['--metrics-path=metrics'], 'invalid value "metrics" for flag -metrics-path: must start with "/"'],
      [
        ['--leader-election-labels=team=storage'],
        'invalid value "team=storage" for flag -leader-election-labels: malformed item in list of labels: team=storage (want key:value)',
      ],
      [
        ['--leader-election-labels=Example.com/team:a'],
        'invalid value "Example.com/team:a" for flag -leader-election-labels: label key "Example.com/team": the prefix before "/" must be a DNS subdomain (lower case, e.g. "example.com")',
      ],
      [
        ['--leader-election-labels=team:a b'],
        'invalid value "team:a b" for flag -leader-election-labels: label value "a b" of "team": must be at most 63 characters, alphanumeric at both ends, with "-", "_" or "." inside',
      ],
      [['start'], 'unexpected argument "start": prog takes flags only'],
    ];
    for (const [argv, message] of cases) {
      const result = exit(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stdout).toBeUndefined();
      expect(result.stderr, argv.join(' ')).toMatch(
        new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nUsage of prog:\n`),
      );
    }
  });

  it("takes the binary's defaults of the common options, and shows them in the help", () => {
    const parseNode = flagsCommandLine(
      {},
      {
        name: 'node',
        commonDefaults: { leaderElection: false, httpEndpoint: { host: '::', port: 8080 }, workerThreads: 2 },
      },
    );
    const result = parseNode([], {});
    expect(result).toMatchObject({
      kind: 'run',
      common: { leaderElection: false, httpEndpoint: { host: '::', port: 8080 }, workerThreads: 2 },
    });
    const help = parseNode(['--help'], {});
    expect(help.kind === 'exit' ? help.stdout : '').toContain('  -http-endpoint address\n    \tThe TCP');
    expect(help.kind === 'exit' ? help.stdout : '').toContain('(default "[::]:8080")');
    expect(help.kind === 'exit' ? help.stdout : '').toMatch(
      / {2}-leader-election\n {4}\tRun only while holding the Lease named after the provisioner \(its name with \/ as -\)\.\n/,
    );
    expect(parseNode(['--leader-election'], {})).toMatchObject({ common: { leaderElection: true } });
  });

  it('refuses a binary flag that redefines a common flag or -help', () => {
    expect(() => flagsCommandLine({ 'kube-api-qps': { type: 'float', usage: 'x' } }, { name: 'p' })).toThrow(TypeError);
    expect(() => flagsCommandLine({ h: { type: 'boolean', usage: 'x' } }, { name: 'p' })).toThrow(
      /-h is one of the runtime's own flags/,
    );
  });
});

describe('commonOptionsOf', () => {
  const values = (given: Record<string, ParsedValue>): Map<string, ParsedValue> =>
    completeFlagValues(new Map(Object.entries(given)), COMMON_FLAGS, {});

  it("gives another syntax's parser the common options of the common flags' values", () => {
    expect(
      commonOptionsOf(
        values({ 'http-endpoint': '127.0.0.1:9090', 'leader-election-labels': 'a:b', 'kube-api-qps': 20 }),
      ),
    ).toMatchObject({
      httpEndpoint: { host: '127.0.0.1', port: 9090 },
      leaderElectionLabels: { a: 'b' },
      kubeApiQps: 20,
      kubeApiBurst: COMMON_DEFAULTS.kubeApiBurst,
      leaseDurationMs: COMMON_DEFAULTS.leaseDurationMs,
    });
  });

  it("names the flags in its messages as that syntax writes them, Go's single dash by default", () => {
    const timings = values({ 'leader-election-renew-deadline': 15_000 });
    expect(() => commonOptionsOf(timings)).toThrow(
      /^-leader-election-lease-duration must be longer than -leader-election-renew-deadline$/,
    );
    expect(() => commonOptionsOf(timings, { flagPrefix: '--' })).toThrow(
      /^--leader-election-lease-duration must be longer than --leader-election-renew-deadline$/,
    );
    expect(() => commonOptionsOf(values({ 'leader-election-retry-period': 9_000 }), { flagPrefix: '--' })).toThrow(
      /^--leader-election-renew-deadline must be longer than 1.2 × --leader-election-retry-period$/,
    );
    expect(() =>
      commonOptionsOf(values({ 'metrics-address': ':9090', 'http-endpoint': ':8080' }), { flagPrefix: '--' }),
    ).toThrow(/^only one of --metrics-address and --http-endpoint can be set$/);
  });
});

describe('pickCommonOptions', () => {
  it("takes the common options out of a binary's parsed options by name, with the overrides over them", () => {
    const parsed = {
      pvDir: '/tmp/pv',
      kubeconfig: undefined,
      leaderElection: false,
      leaseDurationMs: 20_000,
      httpEndpoint: { host: '0.0.0.0', port: 9090 },
      loggingFormat: 'json' as const,
      verbosity: 2,
    };
    const common = pickCommonOptions(parsed, { kubeApiQps: -1, verbosity: 5 });
    expect(common).toStrictEqual({
      kubeconfig: undefined,
      leaderElection: false,
      leaseDurationMs: 20_000,
      httpEndpoint: { host: '0.0.0.0', port: 9090 },
      loggingFormat: 'json',
      verbosity: 5,
      kubeApiQps: -1,
    });
  });
});
