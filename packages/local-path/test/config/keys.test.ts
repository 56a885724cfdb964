/** Keys of config.json are matched as Go's encoding/json matches struct fields. */
import { describe, expect, it } from 'vitest';
import { decodeConfig, foldKey, matchKey, parseConfig } from '../../src/config/index.js';

describe('config keys', () => {
  it('accepts sharedFilesystemPath, the spelling of the README, as sharedFileSystemPath', () => {
    const config = parseConfig('{"sharedFilesystemPath": "/mnt/nfs"}');
    expect(config.defaultConfig?.sharedFileSystemPath).toBe('/mnt/nfs');
  });

  it('matches every top-level key whatever its case', () => {
    const raw = decodeConfig(
      JSON.stringify({
        NODEPATHMAP: [{ NODE: 'n1', PATHS: ['/a'] }],
        sharedfilesystempath: '/s',
        CmdTimeoutSeconds: 7,
        SETUPCOMMAND: '/setup',
        TearDownCommand: '/teardown',
      }),
    );
    expect(raw).toEqual({
      nodePathMap: [{ node: 'n1', paths: ['/a'] }],
      sharedFileSystemPath: '/s',
      storageClassConfigs: null,
      cmdTimeoutSeconds: 7,
      setupCommand: '/setup',
      teardownCommand: '/teardown',
      unknownKeys: [],
    });
  });

  it('matches keys inside storageClassConfigs and their nodePathMap entries whatever their case', () => {
    const config = parseConfig(
      JSON.stringify({
        StorageClassConfigs: {
          fast: { NodePathMap: [{ Node: 'n1', Paths: ['/fast'] }] },
          nfs: { SharedFilesystemPath: '/nfs' },
        },
      }),
    );
    expect(config.storageClassConfigs.get('fast')?.nodePathMap.get('n1')).toEqual(['/fast']);
    expect(config.storageClassConfigs.get('nfs')?.sharedFileSystemPath).toBe('/nfs');
  });

  it('keeps class names and node names exactly as written', () => {
    const config = parseConfig(
      JSON.stringify({ storageClassConfigs: { Fast: { nodePathMap: [{ node: 'Node-1', paths: ['/a'] }] } } }),
    );
    expect([...config.storageClassConfigs.keys()]).toEqual(['Fast']);
    expect([...config.storageClassConfigs.get('Fast')!.nodePathMap.keys()]).toEqual(['Node-1']);
  });

  it('folds the Unicode letters Go folds to ASCII: Kelvin sign, long s, dotted and dotless i', () => {
    expect(matchKey('sharedFileSystemPath'.replace('s', '\u017f'), ['sharedFileSystemPath'])).toBe(
      'sharedFileSystemPath',
    );
    expect(matchKey('\u212Aey', ['key'])).toBe('key');
    expect(foldKey('\u212A')).toBe('K');
    expect(foldKey('\u0131')).toBe('I');
    expect(foldKey('\u0130')).toBe('I');
    const raw = decodeConfig('{"cmdT\u0131meoutSeconds": 9, "setupCommand": "x"}');
    expect(raw.cmdTimeoutSeconds).toBe(9);
  });

  it('does not match keys that only look alike', () => {
    expect(matchKey('node_path_map', ['nodePathMap'])).toBeUndefined();
    expect(matchKey('ß', ['SS'])).toBeUndefined();
  });

  it('prefers an exact match over a case-insensitive one', () => {
    expect(matchKey('node', ['Node', 'node'])).toBe('node');
  });

  it('ignores unknown keys, such as chart-only storageClass blocks', () => {
    const config = parseConfig(
      JSON.stringify({ storageClass: { defaultClass: true }, nodePathMap: [{ node: 'n1', paths: ['/a'], extra: 1 }] }),
    );
    expect(config.defaultConfig?.nodePathMap.get('n1')).toEqual(['/a']);
  });

  it('lets the last of two differently cased keys win, as Go decodes them in order', () => {
    expect(decodeConfig('{"setupCommand": "/one", "SetupCommand": "/two"}').setupCommand).toBe('/two');
    expect(decodeConfig('{"NODEPATHMAP": [{"node": "a"}], "nodePathMap": [{"node": "b"}]}').nodePathMap).toEqual([
      { node: 'b', paths: [] },
    ]);
  });

  it('merges storageClassConfigs given under two differently cased keys, as Go decodes both into one map', () => {
    const raw = decodeConfig(
      '{"storageClassConfigs": {"a": {"sharedFileSystemPath": "/a"}}, "StorageClassConfigs": {"b": {"sharedFileSystemPath": "/b"}}}',
    );
    expect([...raw.storageClassConfigs!.keys()]).toEqual(['a', 'b']);
  });
});
