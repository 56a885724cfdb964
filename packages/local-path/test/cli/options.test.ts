/** The command line: defaults, environment fallbacks, precedence, upstream's validation messages, syntax errors. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeUsageError,
  HELP,
  NO_COMMAND_MESSAGE,
  parseCommandLine,
  parseEndpoint,
  UsageError,
  type LocalPathOptions,
} from '../../src/cli/options.js';

const packageVersion = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

type Env = Record<string, string | undefined>;

function start(argv: string[], env: Env = {}): LocalPathOptions {
  const command = parseCommandLine(argv, env);
  if (command.kind !== 'start') throw new Error(`expected start, got ${command.kind}`);
  return command.options;
}

function usageError(argv: string[], env: Env = {}): UsageError {
  try {
    parseCommandLine(argv, env);
  } catch (err) {
    if (err instanceof UsageError) return err;
    throw err;
  }
  throw new Error('expected a UsageError');
}

const DEFAULTS: LocalPathOptions = {
  debug: false,
  config: undefined,
  provisionerName: 'rancher.io/local-path',
  namespace: 'local-path-storage',
  helperImage: 'rancher/library-busybox:1.32.1',
  kubeconfig: undefined,
  configmapName: 'local-path-config',
  serviceAccountName: 'local-path-provisioner-service-account',
  helperPodFile: undefined,
  workerThreads: 4,
  provisioningRetryCount: 15,
  deletionRetryCount: 15,
  allowUnsafeHelperPodTemplate: false,
  kubeApiQps: 5,
  kubeApiBurst: 10,
  healthPort: 8080,
  leaderElection: true,
  leaderElectionNamespace: 'local-path-storage',
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  releaseOnCancel: true,
  httpEndpoint: undefined,
  loggingFormat: 'text',
  nodeMode: false,
  nodeName: undefined,
  hostRoot: undefined,
  kuttiRootPath: undefined,
  configMountPath: undefined,
};

describe('defaults', () => {
  it('gives every option its upstream (or sidecar) default', () => {
    expect(start(['start'])).toEqual(DEFAULTS);
  });

  it('ignores environment variables that are not bound to a flag', () => {
    const env = {
      CONFIG: 'x.json',
      KUBE_CLIENT_QPS: '50',
      WORKER_THREADS: '9',
      CONFIGMAP_NAME: 'other',
      HELPER_POD_FILE: '/x',
    };
    expect(start(['start'], env)).toEqual(DEFAULTS);
  });
});

describe('every flag, both spellings', () => {
  const cases: [flag: string, value: string, key: keyof LocalPathOptions, expected: unknown][] = [
    ['config', '/etc/config/config.json', 'config', '/etc/config/config.json'],
    ['provisioner-name', 'example.com/lp', 'provisionerName', 'example.com/lp'],
    ['namespace', 'storage', 'namespace', 'storage'],
    ['helper-image', 'busybox', 'helperImage', 'busybox'],
    ['kubeconfig', '/root/.kube/config', 'kubeconfig', '/root/.kube/config'],
    ['configmap-name', 'cm', 'configmapName', 'cm'],
    ['service-account-name', 'sa', 'serviceAccountName', 'sa'],
    ['helper-pod-file', '/etc/config/helperPod.yaml', 'helperPodFile', '/etc/config/helperPod.yaml'],
    ['worker-threads', '8', 'workerThreads', 8],
    ['provisioning-retry-count', '0', 'provisioningRetryCount', 0],
    ['deletion-retry-count', '3', 'deletionRetryCount', 3],
    ['kube-api-qps', '20.5', 'kubeApiQps', 20.5],
    ['kube-client-qps', '30', 'kubeApiQps', 30],
    ['kube-api-burst', '40', 'kubeApiBurst', 40],
    ['kube-client-burst', '50', 'kubeApiBurst', 50],
    ['health-port', '9000', 'healthPort', 9000],
    ['leader-election-namespace', 'kube-system', 'leaderElectionNamespace', 'kube-system'],
    ['http-endpoint', ':9090', 'httpEndpoint', { host: '0.0.0.0', port: 9090 }],
    ['logging-format', 'json', 'loggingFormat', 'json'],
  ];
  for (const [flag, value, key, expected] of cases) {
    it(`--${flag}`, () => {
      expect(start(['start', `--${flag}`, value])[key]).toEqual(expected);
      expect(start(['start', `--${flag}=${value}`])[key]).toEqual(expected);
      expect(start(['start', `-${flag}`, value])[key]).toEqual(expected);
    });
  }

  it('takes booleans as --flag or --flag=value, never a separate value', () => {
    expect(start(['start', '--allow-unsafe-helper-pod-template']).allowUnsafeHelperPodTemplate).toBe(true);
    expect(start(['start', '--allow-unsafe-helper-pod-template=false']).allowUnsafeHelperPodTemplate).toBe(false);
    expect(start(['start', '--leader-election=false']).leaderElection).toBe(false);
    expect(start(['start']).releaseOnCancel).toBe(true);
    expect(start(['start', '--leader-election-release-on-cancel=false']).releaseOnCancel).toBe(false);
    expect(start(['start', '--leader-election-release-on-cancel']).releaseOnCancel).toBe(true);
    expect(start(['start', '--leader-election=0', '--leader-election']).leaderElection).toBe(true);
    expect(usageError(['start', '--leader-election', 'false'])).toMatchObject({
      message: 'unexpected argument "false": start takes no arguments',
      exitCode: 2,
    });
  });

  it('lets the last occurrence win, aliases included', () => {
    expect(start(['start', '--worker-threads', '2', '--worker-threads', '3']).workerThreads).toBe(3);
    expect(start(['start', '--kube-client-qps', '1', '--kube-api-qps', '2']).kubeApiQps).toBe(2);
  });

  it('keeps a value that starts with a dash, as Go does', () => {
    expect(start(['start', '--config', '--not-a-flag']).config).toBe('--not-a-flag');
  });

  it('defaults the Lease namespace to --namespace, from the flag or POD_NAMESPACE', () => {
    expect(start(['start', '--namespace', 'ns1']).leaderElectionNamespace).toBe('ns1');
    expect(start(['start'], { POD_NAMESPACE: 'ns2' }).leaderElectionNamespace).toBe('ns2');
  });

  it('maps a zero QPS or burst to client-go defaults and keeps a negative QPS (no limit)', () => {
    expect(start(['start', '--kube-api-qps=0', '--kube-api-burst=0'])).toMatchObject({
      kubeApiQps: 5,
      kubeApiBurst: 10,
    });
    expect(start(['start', '--kube-api-qps=-1']).kubeApiQps).toBe(-1);
    // Without a limit the burst means nothing, as in client-go.
    expect(start(['start', '--kube-api-qps=-1', '--kube-client-burst=-1'])).toMatchObject({
      kubeApiQps: -1,
      kubeApiBurst: -1,
    });
  });

  it('treats an empty --config, --kubeconfig or --helper-pod-file as unset', () => {
    expect(start(['start', '--config=', '--kubeconfig', '', '--helper-pod-file='])).toMatchObject({
      config: undefined,
      kubeconfig: undefined,
      helperPodFile: undefined,
    });
  });

  it('reads CONFIG_MOUNT_PATH directly', () => {
    expect(start(['start'], { CONFIG_MOUNT_PATH: '/etc/config/' }).configMountPath).toBe('/etc/config/');
    expect(start(['start'], { CONFIG_MOUNT_PATH: '' }).configMountPath).toBeUndefined();
  });
});

describe('environment fallbacks and precedence', () => {
  const cases: [
    env: string,
    flag: string,
    envValue: string,
    flagValue: string,
    key: keyof LocalPathOptions,
    fromEnv: unknown,
    fromFlag: unknown,
  ][] = [
    ['PROVISIONER_NAME', 'provisioner-name', 'env.io/lp', 'flag.io/lp', 'provisionerName', 'env.io/lp', 'flag.io/lp'],
    ['POD_NAMESPACE', 'namespace', 'env-ns', 'flag-ns', 'namespace', 'env-ns', 'flag-ns'],
    ['HELPER_IMAGE', 'helper-image', 'env:1', 'flag:1', 'helperImage', 'env:1', 'flag:1'],
    ['SERVICE_ACCOUNT_NAME', 'service-account-name', 'env-sa', 'flag-sa', 'serviceAccountName', 'env-sa', 'flag-sa'],
    [
      'ALLOW_UNSAFE_HELPER_POD_TEMPLATE',
      'allow-unsafe-helper-pod-template',
      'true',
      'false',
      'allowUnsafeHelperPodTemplate',
      true,
      false,
    ],
    ['HEALTH_PORT', 'health-port', '8181', '8282', 'healthPort', 8181, 8282],
    ['NODE_NAME', 'node-name', 'env-node', 'flag-node', 'nodeName', 'env-node', 'flag-node'],
    ['HOST_ROOT', 'host-root', '/env-host', '/flag-host', 'hostRoot', '/env-host', '/flag-host'],
  ];
  for (const [name, flag, envValue, flagValue, key, fromEnv, fromFlag] of cases) {
    it(`${name} backs --${flag}, and the flag wins`, () => {
      expect(start(['start'], { [name]: envValue })[key]).toEqual(fromEnv);
      expect(start(['start', `--${flag}=${flagValue}`], { [name]: envValue })[key]).toEqual(fromFlag);
    });
  }

  it('RANCHER_DEBUG backs --debug, and the flag wins', () => {
    expect(start(['start'], { RANCHER_DEBUG: 'true' }).debug).toBe(true);
    expect(start(['start'], { RANCHER_DEBUG: '1' }).debug).toBe(true);
    expect(start(['--debug=false', 'start'], { RANCHER_DEBUG: 'true' }).debug).toBe(false);
  });

  it("takes an empty string variable as an empty value (then upstream's empty check fires)", () => {
    expect(usageError(['start'], { POD_NAMESPACE: '' }).message).toBe('invalid empty flag namespace');
  });

  it('takes an empty boolean variable as false and an empty number variable as unset', () => {
    expect(start(['start'], { RANCHER_DEBUG: '', HEALTH_PORT: '' })).toMatchObject({ debug: false, healthPort: 8080 });
  });

  it("refuses unparsable variables with urfave/cli's message", () => {
    expect(usageError(['start'], { HEALTH_PORT: 'abc' })).toMatchObject({
      message:
        'could not parse "abc" as int64 value from environment variable "HEALTH_PORT" for flag health-port: strconv.ParseInt: parsing "abc": invalid syntax',
      flag: 'health-port',
    });
    expect(usageError(['start'], { RANCHER_DEBUG: 'yes' })).toMatchObject({
      message:
        'could not parse "yes" as bool value from environment variable "RANCHER_DEBUG" for flag debug: strconv.ParseBool: parsing "yes": invalid syntax',
      flag: 'debug',
    });
  });

  it('does not read a variable of a flag given on the command line', () => {
    expect(start(['start', '--health-port', '1'], { HEALTH_PORT: 'abc' }).healthPort).toBe(1);
  });
});

describe('upstream validation messages', () => {
  const cases: [argv: string[], flag: string, message: string][] = [
    [['start', '--provisioner-name='], 'provisioner-name', 'invalid empty flag provisioner-name'],
    [['start', '--namespace='], 'namespace', 'invalid empty flag namespace'],
    [['start', '--configmap-name='], 'configmap-name', 'invalid empty flag configmap-name'],
    [['start', '--helper-image='], 'helper-image', 'invalid empty flag helper-image'],
    [['start', '--service-account-name='], 'service-account-name', 'invalid empty flag service-account-name'],
    [
      ['start', '--provisioning-retry-count=-1'],
      'provisioning-retry-count',
      'invalid negative integer flag provisioning-retry-count',
    ],
    [
      ['start', '--deletion-retry-count=-1'],
      'deletion-retry-count',
      'invalid negative integer flag deletion-retry-count',
    ],
    [['start', '--worker-threads=0'], 'worker-threads', 'invalid zero or negative integer flag worker-threads'],
    [['start', '--worker-threads=-2'], 'worker-threads', 'invalid zero or negative integer flag worker-threads'],
    [['start', '--kube-api-burst=-1'], 'kube-api-burst', 'invalid negative integer flag kube-api-burst'],
  ];
  for (const [argv, flag, message] of cases) {
    it(message, () => {
      const err = usageError(argv);
      expect(err).toMatchObject({ message, flag, exitCode: 1 });
      expect(describeUsageError(err)).toBe(`Error starting daemon: ${message}`);
    });
  }

  it('checks in upstream start-up order', () => {
    expect(usageError(['start', '--worker-threads=0', '--helper-image=', '--namespace=']).flag).toBe('namespace');
    expect(usageError(['start', '--worker-threads=0', '--helper-image=']).flag).toBe('helper-image');
    expect(usageError(['start', '--worker-threads=0', '--deletion-retry-count=-1']).flag).toBe('deletion-retry-count');
  });
});

describe("our flags' validation", () => {
  it('parses the leader election timings as Go durations, defaults 15s / 10s / 2s', () => {
    expect(start(['start'])).toMatchObject({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    const o = start([
      'start',
      '--leader-election-lease-duration=1m30s',
      '--leader-election-renew-deadline',
      '20s',
      '-leader-election-retry-period=1500ms',
    ]);
    expect(o).toMatchObject({ leaseDurationMs: 90_000, renewDeadlineMs: 20_000, retryPeriodMs: 1_500 });
  });

  it('refuses a bad leader election timing, naming the flag', () => {
    expect(usageError(['start', '--leader-election-lease-duration=15'])).toMatchObject({
      message: 'invalid value "15" for flag -leader-election-lease-duration: parse error',
      flag: 'leader-election-lease-duration',
      exitCode: 2,
    });
    expect(usageError(['start', '--leader-election-retry-period=0s'])).toMatchObject({
      flag: 'leader-election-retry-period',
      exitCode: 1,
    });
    expect(usageError(['start', '--leader-election-renew-deadline=20s'])).toMatchObject({
      flag: 'leader-election-lease-duration',
      exitCode: 1,
    });
    expect(usageError(['start', '--leader-election-retry-period=9s'])).toMatchObject({
      flag: 'leader-election-renew-deadline',
      exitCode: 1,
    });
  });

  it('refuses an empty Lease namespace', () => {
    expect(usageError(['start', '--leader-election-namespace='])).toMatchObject({
      message: 'invalid empty flag leader-election-namespace',
      flag: 'leader-election-namespace',
    });
  });

  it('refuses a malformed --http-endpoint or one on the health port', () => {
    for (const bad of ['9090', 'host:', 'host:99999', '[::1', 'a:b:1']) {
      expect(usageError(['start', `--http-endpoint=${bad}`]).flag).toBe('http-endpoint');
    }
    expect(usageError(['start', '--http-endpoint=:8080']).message).toBe(
      'invalid flag http-endpoint ":8080": port 8080 is already the health-port',
    );
    expect(parseEndpoint('[::1]:9090')).toEqual({ host: '::1', port: 9090 });
    expect(parseEndpoint('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
  });

  it('refuses an unknown --logging-format', () => {
    expect(usageError(['start', '--logging-format=xml'])).toMatchObject({
      message: 'invalid flag logging-format "xml": want "text" or "json"',
      flag: 'logging-format',
    });
  });
});

describe('syntax', () => {
  it('accepts --debug (or -d) before start, and after it as urfave/cli v3 inherits global flags', () => {
    expect(start(['--debug', 'start']).debug).toBe(true);
    expect(start(['-d', 'start']).debug).toBe(true);
    expect(start(['start', '--debug']).debug).toBe(true);
    expect(start(['start', '--config', 'c.json', '-d']).debug).toBe(true);
  });

  it('refuses start flags before start', () => {
    expect(usageError(['--config', 'c.json', 'start'])).toMatchObject({
      message: 'flag provided but not defined: -config',
      exitCode: 2,
    });
  });

  it('refuses unknown flags and commands', () => {
    const err = usageError(['start', '--no-such-flag']);
    expect(err).toMatchObject({
      message: 'flag provided but not defined: -no-such-flag',
      flag: 'no-such-flag',
      exitCode: 2,
    });
    expect(describeUsageError(err)).toBe(
      'Usage error, please check your command: flag provided but not defined: -no-such-flag',
    );
    expect(usageError(['stop'])).toMatchObject({ message: 'unrecognized command: stop', exitCode: 2 });
    expect(usageError(['start', 'extra']).message).toBe('unexpected argument "extra": start takes no arguments');
  });

  it('refuses a missing value and unparsable numbers and booleans', () => {
    expect(usageError(['start', '--config'])).toMatchObject({
      message: 'flag needs an argument: -config',
      flag: 'config',
      exitCode: 2,
    });
    expect(usageError(['start', '--worker-threads', 'four'])).toMatchObject({
      message: 'invalid value "four" for flag -worker-threads: parse error',
      flag: 'worker-threads',
    });
    expect(usageError(['start', '--kube-client-burst=1.5']).message).toBe(
      'invalid value "1.5" for flag -kube-client-burst: parse error',
    );
    expect(usageError(['start', '--kube-api-qps=fast']).message).toBe(
      'invalid value "fast" for flag -kube-api-qps: parse error',
    );
    expect(usageError(['start', '--health-port=99999999999999999999']).message).toBe(
      'invalid value "99999999999999999999" for flag -health-port: value out of range',
    );
    expect(usageError(['--debug=maybe', 'start'])).toMatchObject({
      message: 'invalid boolean value "maybe" for -debug: parse error',
      flag: 'debug',
    });
    expect(usageError(['start', '---config=x']).message).toBe('bad flag syntax: ---config=x');
  });

  it('stops at --', () => {
    expect(usageError(['start', '--', '--debug']).message).toBe(
      'unexpected argument "--debug": start takes no arguments',
    );
  });
});

describe('help and version', () => {
  it('prints help for --help, -h and start --help', () => {
    for (const argv of [['--help'], ['-h'], ['start', '--help'], ['start', '-h']]) {
      expect(parseCommandLine(argv, {})).toEqual({ kind: 'help', text: HELP });
    }
    expect(parseCommandLine(['-h'], { KUTTI_NODE_NAME: 'k1', KUTTI_ROOT_PATH: '/kutti/vols' }).kind).toBe('help');
  });

  it("refuses no command outside kutti's environment with exit code 2, the help, and what to pass", () => {
    for (const argv of [[], ['--debug']]) {
      const err = usageError(argv);
      expect({ message: err.message, exitCode: err.exitCode, showHelp: err.showHelp, flag: err.flag }).toEqual({
        message: NO_COMMAND_MESSAGE,
        exitCode: 2,
        showHelp: true,
        flag: undefined,
      });
    }
    expect(usageError([], { KUTTI_NODE_NAME: '', KUTTI_ROOT_PATH: '' }).showHelp).toBe(true);
    expect(NO_COMMAND_MESSAGE).not.toContain('\n');
  });

  it('prints the version before start', () => {
    expect(parseCommandLine(['--version'], {}, 'v0.0.37')).toEqual({
      kind: 'version',
      text: 'local-path-provisioner version v0.0.37\n',
    });
    // The package's version (upstream's default, with nothing stamped in, is 0.0.1).
    expect(parseCommandLine(['-v'], {})).toEqual({
      kind: 'version',
      text: `local-path-provisioner version ${packageVersion}\n`,
    });
    expect(usageError(['start', '--version']).message).toBe('flag provided but not defined: -version');
  });

  it('lists every flag with its environment variable and default', () => {
    const lines = HELP.split('\n');
    const entry = (flag: string): string => {
      const i = lines.findIndex((l) => l.trimStart().startsWith(flag));
      expect(i, flag).toBeGreaterThanOrEqual(0);
      return `${lines[i]}\n${lines[i + 1]}`;
    };
    expect(entry('--debug, -d')).toContain('(env RANCHER_DEBUG, default false)');
    expect(entry('--config ')).toContain('(default "")');
    expect(entry('--provisioner-name')).toContain('(env PROVISIONER_NAME, default "rancher.io/local-path")');
    expect(entry('--namespace')).toContain('(env POD_NAMESPACE, default "local-path-storage")');
    expect(entry('--helper-image')).toContain('(env HELPER_IMAGE, default "rancher/library-busybox:1.32.1")');
    expect(entry('--kubeconfig')).toContain('(default "")');
    expect(entry('--configmap-name')).toContain('(default "local-path-config")');
    expect(entry('--service-account-name')).toContain(
      '(env SERVICE_ACCOUNT_NAME, default "local-path-provisioner-service-account")',
    );
    expect(entry('--helper-pod-file')).toContain('(default "")');
    expect(entry('--worker-threads')).toContain('(default 4)');
    expect(entry('--provisioning-retry-count')).toContain('(default 15)');
    expect(entry('--deletion-retry-count')).toContain('(default 15)');
    expect(entry('--allow-unsafe-helper-pod-template')).toContain(
      '(env ALLOW_UNSAFE_HELPER_POD_TEMPLATE, default false)',
    );
    expect(entry('--kube-api-burst, --kube-client-burst')).toContain('(default 10)');
    expect(entry('--kube-api-qps, --kube-client-qps')).toContain('(default 5)');
    expect(entry('--health-port')).toContain('(env HEALTH_PORT, default 8080)');
    expect(entry('--leader-election ')).toContain('(default true)');
    expect(entry('--leader-election-namespace')).toContain('(default the namespace)');
    expect(entry('--leader-election-lease-duration')).toContain('(default 15s)');
    expect(entry('--leader-election-renew-deadline')).toContain('(default 10s)');
    expect(entry('--leader-election-retry-period')).toContain('(default 2s)');
    expect(entry('--leader-election-release-on-cancel')).toContain('(default true)');
    expect(entry('--http-endpoint')).toContain('(default off)');
    expect(entry('--logging-format')).toContain('(default "text")');
    expect(HELP).toContain('CONFIG_MOUNT_PATH');
  });
});

describe('node mode', () => {
  it('needs the node name', () => {
    const err = usageError(['start', '--node-mode']);
    expect(err.flag).toBe('node-name');
    expect(err.exitCode).toBe(1);
    expect(describeUsageError(err)).toContain('Error starting daemon: invalid empty flag node-name');
    expect(usageError(['start'], { NODE_MODE: 'true', NODE_NAME: '' }).flag).toBe('node-name');
  });

  it('NODE_MODE backs --node-mode, and the flag wins', () => {
    expect(start(['start'], { NODE_MODE: 'true', NODE_NAME: 'n1' }).nodeMode).toBe(true);
    expect(start(['start', '--node-mode=false'], { NODE_MODE: 'true' }).nodeMode).toBe(false);
  });

  it('takes the node name from --node-name, NODE_NAME, then KUTTI_NODE_NAME', () => {
    expect(start(['start', '--node-mode'], { NODE_NAME: 'n1', KUTTI_NODE_NAME: 'k1' }).nodeName).toBe('n1');
    expect(start(['start', '--node-mode'], { KUTTI_NODE_NAME: 'k1' })).toMatchObject({
      nodeMode: true,
      nodeName: 'k1',
    });
    expect(start(['start', '--node-mode', '--node-name=f1'], { KUTTI_NODE_NAME: 'k1' }).nodeName).toBe('f1');
  });

  it("KUTTI_ROOT_PATH (--kutti-root-path) is kutti's root path: the one base path of every node", () => {
    const options = start(['start', '--node-mode'], { KUTTI_NODE_NAME: 'k1', KUTTI_ROOT_PATH: '/kutti/vols/' });
    expect(options.kuttiRootPath).toBe('/kutti/vols/');
    expect(JSON.parse(options.config!)).toEqual({
      nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/kutti/vols'] }],
    });
    expect(start(['start', '--node-mode', '--node-name=n', '--kutti-root-path=/v']).kuttiRootPath).toBe('/v');
  });

  it('refuses KUTTI_ROOT_PATH without node mode, with --config, or when it is not a clean absolute path', () => {
    expect(usageError(['start'], { KUTTI_ROOT_PATH: '/kutti/vols' }).message).toBe(
      'invalid flag kutti-root-path: it needs --node-mode (NODE_MODE)',
    );
    const both = usageError(['start', '--node-mode', '--node-name=n', '--config=/etc/config/config.json'], {
      KUTTI_ROOT_PATH: '/kutti/vols',
    });
    expect(both.message).toContain('give either --config or --kutti-root-path');
    for (const bad of ['kutti', '/', '/a/../b', '/a//b', '/a/./b']) {
      expect(usageError(['start', '--node-mode', '--node-name=n', `--kutti-root-path=${bad}`]).flag).toBe(
        'kutti-root-path',
      );
    }
  });

  it("starts node mode as kutti with no command and kutti's environment (KUTTI_NODE_NAME, KUTTI_ROOT_PATH)", () => {
    const kutti = { KUTTI_NODE_NAME: 'k1', KUTTI_ROOT_PATH: '/kutti/vols' };
    const options = start([], kutti);
    expect(options).toEqual({
      ...DEFAULTS,
      provisionerName: 'kuttiproject/provisioner-localvolume',
      nodeMode: true,
      nodeName: 'k1',
      kuttiRootPath: '/kutti/vols',
      config: JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/kutti/vols'] }] }),
    });
    // The other variables still apply: PROVISIONER_NAME, NODE_NAME, --debug before the (missing) command.
    expect(start([], { ...kutti, PROVISIONER_NAME: 'example.com/local' }).provisionerName).toBe('example.com/local');
    expect(start([], { ...kutti, NODE_NAME: 'n1' }).nodeName).toBe('n1');
    expect(start([], { ...kutti, NODE_MODE: 'false' }).nodeMode).toBe(true);
    expect(start(['--debug'], kutti).debug).toBe(true);
  });

  it("refuses half of kutti's environment with no command, naming the missing variable", () => {
    const noRoot = usageError([], { KUTTI_NODE_NAME: 'k1' });
    expect({ flag: noRoot.flag, exitCode: noRoot.exitCode, showHelp: noRoot.showHelp }).toEqual({
      flag: 'kutti-root-path',
      exitCode: 1,
      showHelp: false,
    });
    expect(noRoot.message).toMatch(/^no command given and KUTTI_ROOT_PATH is empty: /);
    const noNode = usageError([], { KUTTI_ROOT_PATH: '/kutti/vols' });
    expect(noNode.flag).toBe('node-name');
    expect(noNode.message).toMatch(/^no command given and KUTTI_NODE_NAME is empty: /);
    expect(usageError([], { KUTTI_NODE_NAME: 'k1', KUTTI_ROOT_PATH: 'relative' }).flag).toBe('kutti-root-path');
  });

  it('lists its flags in the help', () => {
    expect(HELP).toContain('KUTTI_ROOT_PATH');
    expect(HELP).toContain('--node-mode');
    expect(HELP).toContain('(env NODE_NAME, default "")');
    expect(HELP).toContain('KUTTI_NODE_NAME');
  });
});
