/** parseConfig: JSON and type errors, defaults, and every canonicalization rule with upstream's strings. */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_CMD_TIMEOUT_SECONDS,
  cleanAbsolutePath,
  decodeConfig,
  parseConfig,
} from '../../src/config/index.js';
import { configError, json } from './helpers.js';

/** A top-level config with one nodePathMap. */
function nodes(...entries: unknown[]): string {
  return json({ nodePathMap: entries });
}

/** The smallest config that can provision: the shipped default node map. */
const BASE = { nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] }] };
/** {@link BASE} with more keys. */
function withBase(extra: Record<string, unknown>): string {
  return json({ ...BASE, ...extra });
}

describe('parseConfig defaults', () => {
  it('parses the shipped default config', () => {
    const config = parseConfig(
      json({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: ['/opt/local-path-provisioner'] }] }),
    );
    expect(config.defaultConfig?.nodePathMap).toEqual(
      new Map([['DEFAULT_PATH_FOR_NON_LISTED_NODES', ['/opt/local-path-provisioner']]]),
    );
    expect(config.defaultConfig?.sharedFileSystemPath).toBe('');
    expect(config.storageClassConfigs.size).toBe(0);
    expect(config.cmdTimeoutSeconds).toBe(120);
    expect(config.setupCommand).toBe('');
    expect(config.teardownCommand).toBe('');
  });

  it('uses 120 as cmdTimeoutSeconds when it is absent, zero or negative', () => {
    expect(DEFAULT_CMD_TIMEOUT_SECONDS).toBe(120);
    expect(parseConfig(withBase({})).cmdTimeoutSeconds).toBe(120);
    expect(parseConfig(withBase({ cmdTimeoutSeconds: 0 })).cmdTimeoutSeconds).toBe(120);
    expect(parseConfig(withBase({ cmdTimeoutSeconds: -5 })).cmdTimeoutSeconds).toBe(120);
    expect(parseConfig(withBase({ cmdTimeoutSeconds: null })).cmdTimeoutSeconds).toBe(120);
    expect(parseConfig(withBase({ cmdTimeoutSeconds: 300 })).cmdTimeoutSeconds).toBe(300);
  });

  it('keeps setupCommand and teardownCommand as written', () => {
    const config = parseConfig(withBase({ setupCommand: '/manager setup --x', teardownCommand: '/manager teardown' }));
    expect(config.setupCommand).toBe('/manager setup --x');
    expect(config.teardownCommand).toBe('/manager teardown');
  });

  it('treats a missing node as the empty node name and missing or null paths as none', () => {
    const config = parseConfig(nodes({ paths: ['/a'] }, { node: 'n1' }, { node: 'n2', paths: null }));
    expect(config.defaultConfig?.nodePathMap).toEqual(
      new Map([
        ['', ['/a']],
        ['n1', []],
        ['n2', []],
      ]),
    );
  });

  it('decodes a JSON null config as an empty one, as Go does, and refuses it: it can provision nothing', () => {
    expect(decodeConfig('null').nodePathMap).toEqual([]);
    expect(configError(() => parseConfig('null')).code).toBe('unconfigured');
  });

  it('gives the raw form with Go zero values and storageClassConfigs null when absent', () => {
    expect(decodeConfig('{}')).toEqual({
      nodePathMap: [],
      sharedFileSystemPath: '',
      storageClassConfigs: null,
      cmdTimeoutSeconds: 0,
      setupCommand: '',
      teardownCommand: '',
      unknownKeys: [],
    });
  });

  it('leaves a string unchanged when a later duplicate key gives null, as Go does', () => {
    expect(decodeConfig('{"setupCommand": "/a", "SetupCommand": null}').setupCommand).toBe('/a');
  });
});

describe('parseConfig JSON and type errors', () => {
  it('wraps a JSON syntax error in "fail to load config file <text>: ..." for an inline config', () => {
    const err = configError(() => parseConfig('{"nodePathMap": ['));
    expect(err.code).toBe('invalid-json');
    expect(err.upstream.startsWith('fail to load config file {"nodePathMap": [: ')).toBe(true);
    expect(err.message).toContain('valid JSON');
  });

  it('names the config file in JSON errors when given', () => {
    const err = configError(() => parseConfig('{', '/etc/config/config.json'));
    expect(err.upstream.startsWith('fail to load config file /etc/config/config.json: ')).toBe(true);
  });

  it('reports empty text as unexpected end of JSON input', () => {
    expect(configError(() => parseConfig('', '/etc/config/config.json')).upstream).toBe(
      'fail to load config file /etc/config/config.json: unexpected end of JSON input',
    );
  });

  it('refuses a config that is not an object', () => {
    const err = configError(() => parseConfig('[]', 'c.json'));
    expect(err.code).toBe('wrong-type');
    expect(err.upstream).toBe(
      'fail to load config file c.json: json: cannot unmarshal array into Go value of type main.ConfigData',
    );
  });

  it('refuses a value of the wrong type and names the field', () => {
    const err = configError(() => parseConfig('{"cmdTimeoutSeconds": "60"}', 'c.json'));
    expect(err.code).toBe('wrong-type');
    expect(err.upstream).toBe(
      'fail to load config file c.json: json: cannot unmarshal string into Go struct field ConfigData.cmdTimeoutSeconds of type int',
    );
    expect(err.hint).toBe('"cmdTimeoutSeconds" must be an integer');
    expect(configError(() => parseConfig('{"sharedFileSystemPath": 1}')).hint).toBe(
      '"sharedFileSystemPath" must be a string',
    );
    expect(configError(() => parseConfig('{"nodePathMap": {}}')).hint).toBe('"nodePathMap" must be an array');
    expect(configError(() => parseConfig('{"nodePathMap": [{"paths": "/a"}]}')).hint).toBe(
      '"nodePathMap.paths" must be an array',
    );
    expect(configError(() => parseConfig('{"nodePathMap": [{"node": true}]}')).hint).toBe(
      '"nodePathMap.node" must be a string',
    );
    expect(configError(() => parseConfig('{"storageClassConfigs": []}')).code).toBe('wrong-type');
    expect(configError(() => parseConfig('{"storageClassConfigs": {"a": 1}}')).code).toBe('wrong-type');
  });

  it('refuses a non-integer cmdTimeoutSeconds, even one written 60.0 or 6e1, as Go does', () => {
    expect(configError(() => parseConfig('{"cmdTimeoutSeconds": 1.5}')).upstream).toContain(
      'json: cannot unmarshal number 1.5 into Go struct field ConfigData.cmdTimeoutSeconds of type int',
    );
    expect(configError(() => parseConfig('{"cmdTimeoutSeconds": 60.0}')).code).toBe('wrong-type');
    expect(configError(() => parseConfig('{"cmdTimeoutSeconds": 6e1}')).code).toBe('wrong-type');
    expect(configError(() => parseConfig('{"cmdTimeoutSeconds": 99999999999999999999}')).code).toBe('wrong-type');
  });

  it('is a ConfigError, an Error with the upstream string and a hint in its message', () => {
    const err = configError(() => parseConfig('{'));
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.name).toBe('ConfigError');
    expect(err.message).toBe(`${err.upstream}; ${err.hint}`);
  });
});

describe('parseConfig canonicalization', () => {
  const prefix = 'StorageClass config canonicalization failed: ';

  it('refuses a node listed twice with "duplicate node <node>"', () => {
    const err = configError(() => parseConfig(nodes({ node: 'n1', paths: ['/a'] }, { node: 'n1', paths: ['/b'] })));
    expect(err.code).toBe('duplicate-node');
    expect(err.upstream).toBe(`${prefix}duplicate node n1`);
    expect(err.message).toContain('once in nodePathMap');
  });

  it('refuses DEFAULT_PATH_FOR_NON_LISTED_NODES listed twice', () => {
    const d = 'DEFAULT_PATH_FOR_NON_LISTED_NODES';
    expect(configError(() => parseConfig(nodes({ node: d }, { node: d }))).upstream).toBe(
      `${prefix}duplicate node ${d}`,
    );
  });

  it('refuses a relative path with "path must start with / for path <p> on node <node>"', () => {
    const err = configError(() => parseConfig(nodes({ node: 'n1', paths: ['opt/data'] })));
    expect(err.code).toBe('relative-path');
    expect(err.upstream).toBe(`${prefix}path must start with / for path opt/data on node n1`);
    expect(err.message).toContain('absolute path');
  });

  it('refuses an empty path as not starting with / instead of crashing as upstream does', () => {
    const err = configError(() => parseConfig(nodes({ node: 'n1', paths: [''] })));
    expect(err.upstream).toBe(`${prefix}path must start with / for path  on node n1`);
    expect(configError(() => parseConfig(nodes({ node: 'n1', paths: [null] }))).code).toBe('relative-path');
  });

  it('refuses the root directory, however written, with "cannot use root (\'/\') as path on node <node>"', () => {
    for (const p of ['/', '//', '/.', '/tmp/..', '/..']) {
      const err = configError(() => parseConfig(nodes({ node: 'n1', paths: [p] })));
      expect(err.code).toBe('root-path');
      expect(err.upstream).toBe(`${prefix}cannot use root ('/') as path on node n1`);
    }
  });

  it('refuses the same path twice on a node, comparing cleaned paths and quoting the path as written', () => {
    const err = configError(() => parseConfig(nodes({ node: 'n1', paths: ['/data', '/data/'] })));
    expect(err.code).toBe('duplicate-path');
    expect(err.upstream).toBe(`${prefix}duplicate path /data/ on node n1`);
    expect(configError(() => parseConfig(nodes({ node: 'n1', paths: ['/a/b', '/a/x/../b'] }))).upstream).toBe(
      `${prefix}duplicate path /a/x/../b on node n1`,
    );
  });

  it('allows the same path on different nodes', () => {
    const config = parseConfig(nodes({ node: 'n1', paths: ['/data'] }, { node: 'n2', paths: ['/data'] }));
    expect(config.defaultConfig?.nodePathMap.get('n2')).toEqual(['/data']);
  });

  it('stores cleaned paths in config order', () => {
    const config = parseConfig(nodes({ node: 'n1', paths: ['/b/', '/a//x/./y', '/c/../d'] }));
    expect(config.defaultConfig?.nodePathMap.get('n1')).toEqual(['/b', '/a/x/y', '/d']);
  });

  it('cleans paths as Go filepath.Clean does', () => {
    expect(cleanAbsolutePath('/a/b/')).toBe('/a/b');
    expect(cleanAbsolutePath('/a/../b')).toBe('/b');
    expect(cleanAbsolutePath('//a///b')).toBe('/a/b');
    expect(cleanAbsolutePath('/../../a')).toBe('/a');
    expect(cleanAbsolutePath('/')).toBe('/');
  });

  it('refuses a null nodePathMap entry instead of crashing as upstream does', () => {
    const err = configError(() => parseConfig('{"nodePathMap": [null]}'));
    expect(err.code).toBe('null-entry');
    expect(err.upstream).toBe(`${prefix}nodePathMap entry 0 is null`);
  });

  it('prefixes class errors with "config for class <name> is invalid: "', () => {
    const err = configError(() =>
      parseConfig(json({ storageClassConfigs: { fast: { nodePathMap: [{ node: 'n1', paths: ['rel'] }] } } })),
    );
    expect(err.upstream).toBe(
      `config for class fast is invalid: ${prefix}path must start with / for path rel on node n1`,
    );
    expect(err.code).toBe('relative-path');
  });

  it('checks every class config', () => {
    const text = json({
      storageClassConfigs: {
        ok: { nodePathMap: [{ node: 'n1', paths: ['/a'] }] },
        bad: { nodePathMap: [{ node: 'n1', paths: ['/'] }] },
      },
    });
    expect(configError(() => parseConfig(text)).upstream).toBe(
      `config for class bad is invalid: ${prefix}cannot use root ('/') as path on node n1`,
    );
  });

  it('ignores the top-level nodePathMap and sharedFileSystemPath, even invalid, when storageClassConfigs is set', () => {
    const config = parseConfig(
      json({
        nodePathMap: [{ node: 'n1', paths: ['relative', '/'] }, null],
        sharedFileSystemPath: 'x',
        storageClassConfigs: { nfs: { sharedFileSystemPath: '/nfs' } },
      }),
    );
    expect(config.defaultConfig).toBeUndefined();
    expect([...config.storageClassConfigs.keys()]).toEqual(['nfs']);
  });

  it('uses the top level when storageClassConfigs is empty or null', () => {
    for (const scc of ['{}', 'null']) {
      const config = parseConfig(`{"sharedFileSystemPath": "/nfs", "storageClassConfigs": ${scc}}`);
      expect(config.defaultConfig?.sharedFileSystemPath).toBe('/nfs');
      expect(config.storageClassConfigs.size).toBe(0);
    }
  });

  it('does not check sharedFileSystemPath itself at load time (as upstream)', () => {
    expect(parseConfig('{"sharedFileSystemPath": "relative"}').defaultConfig?.sharedFileSystemPath).toBe('relative');
  });

  it('refuses a config that can provision nothing, which upstream accepts and logs as "Applied config"', () => {
    const cases: [string, string, string][] = [
      [json({ nodePathMapp: BASE.nodePathMap }), 'unconfigured', 'unknown keys, ignored: nodePathMapp'],
      [
        json({ sharedFileSystemPath: '/nfs', nodePathMap: [{ node: 'n1', paths: ['/a'] }] }),
        'both-defined',
        'remove either nodePathMap or sharedFileSystemPath',
      ],
      [json({ nodePathMap: [] }), 'unconfigured', 'this config could provision nothing'],
      ['{}', 'unconfigured', 'this config could provision nothing'],
      [
        json({ nodePathMap: [{ node: 'n1', paths: [] }, { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES' }] }),
        'no-paths',
        'give at least one node',
      ],
      [
        json({ storageClassConfigs: { fast: { nodePathMap: [] }, nfs: { sharedFileSystemPath: '/nfs' } } }),
        'unconfigured',
        'config for class fast is invalid',
      ],
    ];
    for (const [text, code, words] of cases) {
      const err = configError(() => parseConfig(text));
      expect(err.code, text).toBe(code);
      expect(err.message, text).toContain(words);
      expect(err.message, text).toContain('StorageClass config canonicalization failed');
    }
  });

  it('lists unknown keys, at every level, as warnings', () => {
    const config = parseConfig(
      json({ ...BASE, nodePathMap: [{ node: 'n1', paths: ['/a'], path: '/b' }], extra: 1, storageClassConfigs: {} }),
    );
    expect(config.warnings).toEqual([
      'unknown key nodePathMap[0].path in config.json, ignored; check its spelling',
      'unknown key extra in config.json, ignored; check its spelling',
    ]);
    const classes = parseConfig(
      json({ storageClassConfigs: { fast: { sharedFileSystemPath: '/f', nodePath: '/x' } } }),
    );
    expect(classes.warnings).toEqual([
      'unknown key storageClassConfigs.fast.nodePath in config.json, ignored; check its spelling',
    ]);
  });

  it('keeps the error chain: the wrapped error is the cause', () => {
    const err = configError(() => parseConfig(nodes({ node: 'n1', paths: ['x'] })));
    expect(err.cause).toBeInstanceOf(ConfigError);
    expect((err.cause as ConfigError).upstream).toBe('path must start with / for path x on node n1');
  });
});
