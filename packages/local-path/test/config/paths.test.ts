/** Choosing the class config, the storage mode and the base path of a volume. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PATH_FOR_NON_LISTED_NODES as DEFAULT,
  chooseBasePath,
  cleanAbsolutePath,
  parseConfig,
  pathsForNode,
  selectClassConfig,
  storageModeOf,
  type StorageClassConfig,
} from '../../src/config/index.js';
import { configError, json } from './helpers.js';

/** A class config as given, unchecked: the load-time checks refuse some that these runtime checks must still handle. */
function local(...entries: { node: string; paths?: string[] }[]): StorageClassConfig {
  return {
    nodePathMap: new Map(entries.map((e) => [e.node, (e.paths ?? []).map(cleanAbsolutePath)])),
    sharedFileSystemPath: '',
  };
}

describe('selectClassConfig', () => {
  it('uses the top-level config for every class when storageClassConfigs is empty', () => {
    const config = parseConfig(json({ nodePathMap: [{ node: 'n1', paths: ['/a'] }] }));
    expect(selectClassConfig(config, 'local-path')).toBe(config.defaultConfig);
    expect(selectClassConfig(config, 'anything')).toBe(config.defaultConfig);
  });

  it('looks classes up by StorageClass name', () => {
    const config = parseConfig(
      json({
        storageClassConfigs: {
          fast: { nodePathMap: [{ node: 'n1', paths: ['/ssd'] }] },
          nfs: { sharedFileSystemPath: '/nfs' },
        },
      }),
    );
    expect(selectClassConfig(config, 'nfs').sharedFileSystemPath).toBe('/nfs');
    expect(selectClassConfig(config, 'fast').nodePathMap.get('n1')).toEqual(['/ssd']);
  });

  it('refuses an unlisted class with "BUG: Got request for unexpected storage class <name>"', () => {
    const config = parseConfig(json({ storageClassConfigs: { fast: { sharedFileSystemPath: '/f' } } }));
    const err = configError(() => selectClassConfig(config, 'slow'));
    expect(err.code).toBe('unknown-class');
    expect(err.upstream).toBe('BUG: Got request for unexpected storage class slow');
    expect(err.message).toContain('storageClassConfigs (configured: fast)');
  });

  it('refuses when no config was ever loaded with "no valid config available"', () => {
    const err = configError(() => selectClassConfig(undefined, 'local-path'));
    expect(err.code).toBe('no-config');
    expect(err.upstream).toBe('no valid config available');
  });
});

describe('storageModeOf', () => {
  it('is node-local for a non-empty nodePathMap, even if no node has paths', () => {
    expect(storageModeOf(local({ node: 'n1', paths: ['/a'] }))).toBe('local');
    expect(storageModeOf(local({ node: 'n1', paths: [] }))).toBe('local');
  });

  it('is shared for a sharedFileSystemPath and an empty or absent nodePathMap', () => {
    expect(storageModeOf(parseConfig('{"sharedFileSystemPath": "/nfs"}').defaultConfig!)).toBe('shared');
    expect(storageModeOf(parseConfig('{"sharedFileSystemPath": "/nfs", "nodePathMap": []}').defaultConfig!)).toBe(
      'shared',
    );
  });

  it('refuses both with "both nodePathMap and sharedFileSystemPath are defined. Please make sure only one is in use"', () => {
    const err = configError(() =>
      storageModeOf({ ...local({ node: 'n1', paths: ['/a'] }), sharedFileSystemPath: '/nfs' }),
    );
    expect(err.code).toBe('both-defined');
    expect(err.upstream).toBe(
      'both nodePathMap and sharedFileSystemPath are defined. Please make sure only one is in use',
    );
  });

  it('refuses neither with "both nodePathMap and sharedFileSystemPath are unconfigured"', () => {
    const err = configError(() => storageModeOf(local()));
    expect(err.code).toBe('unconfigured');
    expect(err.upstream).toBe('both nodePathMap and sharedFileSystemPath are unconfigured');
  });
});

describe('pathsForNode and chooseBasePath', () => {
  it('uses the paths of a listed node', () => {
    const config = local({ node: 'n1', paths: ['/a'] }, { node: DEFAULT, paths: ['/d'] });
    expect(pathsForNode(config, 'n1')).toEqual({ paths: ['/a'], fromDefault: false });
    expect(chooseBasePath(config, { nodeName: 'n1' })).toEqual({ mode: 'local', path: '/a', fromDefault: false });
  });

  it("falls back to DEFAULT_PATH_FOR_NON_LISTED_NODES for an unlisted node and logs upstream's debug message", () => {
    const config = local({ node: 'n1', paths: ['/a'] }, { node: DEFAULT, paths: ['/d'] });
    const messages: string[] = [];
    const chosen = chooseBasePath(config, { nodeName: 'n9', debug: (m) => messages.push(m) });
    expect(chosen).toEqual({ mode: 'local', path: '/d', fromDefault: true });
    expect(messages).toEqual([`config doesn't contain node n9, use ${DEFAULT} instead`]);
  });

  it('refuses an unlisted node without a default entry', () => {
    const err = configError(() => chooseBasePath(local({ node: 'n1', paths: ['/a'] }), { nodeName: 'n2' }));
    expect(err.code).toBe('node-not-listed');
    expect(err.upstream).toBe(`config doesn't contain node n2, and no ${DEFAULT} available`);
  });

  it('refuses a listed node without paths and does not fall back to the default entry', () => {
    const config = local({ node: 'n1', paths: [] }, { node: DEFAULT, paths: ['/d'] });
    const err = configError(() => chooseBasePath(config, { nodeName: 'n1' }));
    expect(err.code).toBe('no-path-on-node');
    expect(err.upstream).toBe('no local path available on node n1');
  });

  it('refuses an unlisted node whose default entry has no paths', () => {
    const err = configError(() => chooseBasePath(local({ node: DEFAULT, paths: [] }), { nodeName: 'n1' }));
    expect(err.upstream).toBe('no local path available on node n1');
  });

  it("uses the nodePath parameter when it is one of the node's paths", () => {
    const config = local({ node: 'n1', paths: ['/a', '/b'] });
    expect(chooseBasePath(config, { nodeName: 'n1', nodePath: '/b', random: () => 0 }).path).toBe('/b');
  });

  it('refuses a nodePath the node does not have with "config doesn\'t contain path <p> on node <n>"', () => {
    const config = local({ node: 'n1', paths: ['/a'] });
    const err = configError(() => chooseBasePath(config, { nodeName: 'n1', nodePath: '/z' }));
    expect(err.code).toBe('path-not-on-node');
    expect(err.upstream).toBe("config doesn't contain path /z on node n1");
    expect(err.message).toContain('one of /a');
  });

  it('compares nodePath exactly, so a trailing slash does not match (as upstream)', () => {
    const config = local({ node: 'n1', paths: ['/a/'] });
    expect(configError(() => chooseBasePath(config, { nodeName: 'n1', nodePath: '/a/' })).upstream).toBe(
      "config doesn't contain path /a/ on node n1",
    );
  });

  it("checks nodePath against the default entry's paths for an unlisted node", () => {
    const config = local({ node: DEFAULT, paths: ['/d1', '/d2'] });
    expect(chooseBasePath(config, { nodeName: 'n5', nodePath: '/d2' })).toEqual({
      mode: 'local',
      path: '/d2',
      fromDefault: true,
    });
  });

  it('treats an empty nodePath as not requested', () => {
    const config = local({ node: 'n1', paths: ['/a', '/b'] });
    expect(chooseBasePath(config, { nodeName: 'n1', nodePath: '', random: () => 0.99 }).path).toBe('/b');
  });

  it('picks among several paths with the injected random source, uniformly', () => {
    const config = local({ node: 'n1', paths: ['/a', '/b', '/c'] });
    const pick = (r: number): string => chooseBasePath(config, { nodeName: 'n1', random: () => r }).path;
    expect([0, 0.33, 0.34, 0.66, 0.67, 0.999].map(pick)).toEqual(['/a', '/a', '/b', '/b', '/c', '/c']);
    expect(pick(1)).toBe('/c');
  });

  it('picks every path eventually with the default random source', () => {
    const config = local({ node: 'n1', paths: ['/a', '/b'] });
    const seen = new Set<string>();
    for (let i = 0; i < 200 && seen.size < 2; i++) seen.add(chooseBasePath(config, { nodeName: 'n1' }).path);
    expect(seen).toEqual(new Set(['/a', '/b']));
  });

  it('uses sharedFileSystemPath as written in shared mode, whatever the node and nodePath', () => {
    const config = parseConfig('{"sharedFileSystemPath": "/mnt/nfs/"}').defaultConfig!;
    expect(chooseBasePath(config, { nodeName: '', nodePath: '/elsewhere' })).toEqual({
      mode: 'shared',
      path: '/mnt/nfs/',
      fromDefault: false,
    });
  });

  it('refuses to choose for a class config with both or neither storage kinds', () => {
    const both = { ...local({ node: 'n1', paths: ['/a'] }), sharedFileSystemPath: '/nfs' };
    expect(configError(() => chooseBasePath(both, { nodeName: 'n1' })).code).toBe('both-defined');
    expect(configError(() => chooseBasePath(local(), { nodeName: 'n1' })).code).toBe('unconfigured');
  });
});
