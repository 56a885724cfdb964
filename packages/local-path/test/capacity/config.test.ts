/**
 * The capacity settings of `config.json`: path entries as strings or `{"path", "capacity"}` objects, `minSize` and
 * `maxSize` per class config, their errors; and sizes as the messages print them.
 */
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../src/config/sizes.js';
import { parseStatusOptions, statusArguments } from '../../src/capacity/status-command.js';
import { ConfigError, parseConfig } from '../../src/config/index.js';

const Gi = 2n ** 30n;

describe('capacity in config.json', () => {
  it('takes a path as a string or as an object with a capacity, in one list', () => {
    const config = parseConfig(
      JSON.stringify({
        nodePathMap: [
          {
            node: 'node-1',
            paths: ['/plain', { path: '/sized/', capacity: '10Gi' }, { PATH: '/fs', Capacity: 'AUTO' }, { path: '/x' }],
          },
        ],
      }),
    );
    const classConfig = config.defaultConfig!;
    expect(classConfig.nodePathMap.get('node-1')).toEqual(['/plain', '/sized', '/fs', '/x']);
    expect(classConfig.capacities?.get('node-1')).toEqual(
      new Map<string, bigint | 'auto'>([
        ['/sized', 10n * Gi],
        ['/fs', 'auto'],
      ]),
    );
    expect(config.warnings).toEqual([]);
  });

  it("keeps upstream's config as it was: no capacities, no bounds", () => {
    const classConfig = parseConfig(
      JSON.stringify({
        nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] }],
      }),
    ).defaultConfig!;
    expect(classConfig).toEqual({
      nodePathMap: new Map([['DEFAULT_PATH_FOR_NON_LISTED_NODES', ['/opt/local-path-provisioner']]]),
      sharedFileSystemPath: '',
    });
  });

  it('reads minSize and maxSize at the top level and per class', () => {
    const top = parseConfig(
      JSON.stringify({ nodePathMap: [{ node: 'a', paths: ['/a'] }], minSize: '1Mi', maxSize: '1Gi' }),
    );
    expect([top.defaultConfig?.minSize, top.defaultConfig?.maxSize]).toEqual([2n ** 20n, Gi]);
    const perClass = parseConfig(
      JSON.stringify({
        storageClassConfigs: { fast: { nodePathMap: [{ node: 'a', paths: ['/a'] }], maxSize: '2Gi' } },
      }),
    );
    expect(perClass.storageClassConfigs.get('fast')?.maxSize).toBe(2n * Gi);
    expect(perClass.storageClassConfigs.get('fast')?.minSize).toBeUndefined();
  });

  it('refuses a capacity or bound that is not a quantity, and minSize above maxSize', () => {
    const bad = (config: unknown): ConfigError => {
      try {
        parseConfig(JSON.stringify(config));
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('accepted');
    };
    const capacity = bad({ nodePathMap: [{ node: 'a', paths: [{ path: '/a', capacity: 'lots' }] }] });
    expect(capacity.code).toBe('invalid-size');
    expect(capacity.message).toBe(
      'StorageClass config canonicalization failed: invalid capacity of /a on node a "lots"; write a Kubernetes quantity such as 500Mi, 20Gi or 1Ti, or "auto" for the file system\'s size',
    );
    expect(bad({ nodePathMap: [{ node: 'a', paths: [{ path: '/a', capacity: 5 }] }] }).code).toBe('wrong-type');
    expect(bad({ nodePathMap: [{ node: 'a', paths: ['/a'] }], minSize: '-1Gi' }).code).toBe('invalid-size');
    expect(
      bad({
        storageClassConfigs: { c: { nodePathMap: [{ node: 'a', paths: ['/a'] }], minSize: '2Gi', maxSize: '1Gi' } },
      }).message,
    ).toBe(
      'config for class c is invalid: StorageClass config canonicalization failed: minSize 2Gi is larger than maxSize 1Gi; make minSize at most maxSize',
    );
  });

  it('names unknown keys of a path object', () => {
    const config = parseConfig(
      JSON.stringify({ nodePathMap: [{ node: 'a', paths: [{ path: '/a', capcity: '1Gi' }] }] }),
    );
    expect(config.warnings).toEqual([
      'unknown key nodePathMap[0].paths.capcity in config.json, ignored; check its spelling',
    ]);
  });
});

describe('formatBytes', () => {
  it('prints the largest binary unit, exact or with one decimal', () => {
    expect([0n, 512n, 1024n, 124n * 2n ** 20n, Gi, 3n * Gi + Gi / 2n, 1000n * 1000n].map(formatBytes)).toEqual([
      '0',
      '512',
      '1Ki',
      '124Mi',
      '1Gi',
      '3.5Gi',
      '976.5Ki',
    ]);
  });
});

describe('status command line', () => {
  it('is recognised after the global flags, and takes its own flags and the environment', () => {
    expect(statusArguments(['start'])).toBeUndefined();
    expect(statusArguments(['--debug', 'status', '-o'])).toEqual(['-o']);
    expect(
      parseStatusOptions(['--output', 'json', '--config', '/etc/config/config.json'], { POD_NAMESPACE: 'ns' }),
    ).toEqual({
      kubeconfig: undefined,
      namespace: 'ns',
      configmapName: 'local-path-config',
      config: '/etc/config/config.json',
      provisionerName: 'rancher.io/local-path',
      output: 'json',
    });
    expect(parseStatusOptions(['--help'], {})).toBe('help');
    expect(() => parseStatusOptions(['--output', 'yaml'], {})).toThrow('invalid flag output "yaml": want text or json');
  });
});
