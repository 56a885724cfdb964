import { Backoff } from '@kprov/provisioner-lib';
import { startApiServer, type KubeObject, type Testkit } from '@kprov/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { ConfigMapConfigSource, type ConfigSnapshot } from '../../src/config/reload.js';
import { json } from './helpers.js';

const NS = 'local-path-storage';
const NAME = 'local-path-config';

const cleanups: (() => Promise<void>)[] = [];
let kit: Testkit;

beforeEach(async () => {
  kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  cleanups.push(() => kit.stop());
  kit.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const config = (path: string): string => json({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [path] }] });
const pathsOf = (s: ConfigSnapshot): readonly string[] | undefined => s.config.defaultConfig?.nodePathMap.get('DEFAULT_PATH_FOR_NON_LISTED_NODES');

function configMap(data: Record<string, string>, name = NAME): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data };
}

function setData(data: Record<string, string>): void {
  kit.store.modify('configmaps', NS, NAME, (o) => {
    o.data = data;
  });
}

interface Started {
  source: ConfigMapConfigSource;
  changed: ConfigSnapshot[];
  rejected: ConfigError[];
  events: string[];
}

function create(): Started & { start(): Promise<void> } {
  const events: string[] = [];
  const source = new ConfigMapConfigSource(
    { kubeConfig: kit.kubeConfig, namespace: NS, name: NAME },
    {
      watcher: { backoff: new Backoff({ initialMs: 10, maxMs: 50 }) },
      recorder: { event: (ref, type, reason, message) => events.push(`${ref.kind} ${ref.namespace ?? ''}/${ref.name} ${type} ${reason}: ${message}`) },
    },
  );
  const changed: ConfigSnapshot[] = [];
  const rejected: ConfigError[] = [];
  source.on('changed', (s) => changed.push(s));
  source.on('rejected', (e) => rejected.push(e));
  const controller = new AbortController();
  cleanups.push(async () => {
    controller.abort();
    await source.stopped();
  });
  return { source, changed, rejected, events, start: () => source.start(controller.signal) };
}

async function started(): Promise<Started> {
  const s = create();
  await s.start();
  return s;
}

describe('ConfigMapConfigSource', () => {
  it('loads config.json and the other keys at start', async () => {
    kit.store.create('configmaps', configMap({ other: 'x' }, 'unrelated'));
    kit.store.create('configmaps', configMap({ 'config.json': config('/opt/a/'), 'helperPod.yaml': 'kind: Pod', setup: '#!/bin/sh', teardown: 'rm -rf' }));
    const { source } = await started();
    const s = source.current();
    expect(pathsOf(s)).toEqual(['/opt/a']);
    expect(s).toMatchObject({ helperPodYaml: 'kind: Pod', setup: '#!/bin/sh', teardown: 'rm -rf' });
  });

  it('rejects start when the ConfigMap, its key or its config is missing or bad', async () => {
    await expect(create().start()).rejects.toMatchObject({
      upstream: `invalid empty flag config and it also does not exist at ConfigMap ${NS}/${NAME} with err: configmaps "${NAME}" not found`,
    });
    kit.store.create('configmaps', configMap({}));
    await expect(create().start()).rejects.toMatchObject({ upstream: expect.stringContaining('config.json is not exist in local-path-config ConfigMap') as unknown });
    setData({ 'config.json': '[' });
    const err: unknown = await create().start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('invalid-json');
  });

  it('applies an update', async () => {
    kit.store.create('configmaps', configMap({ 'config.json': config('/opt/a') }));
    const { source, changed } = await started();
    setData({ 'config.json': config('/opt/b') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']));
    setData({ 'config.json': config('/opt/b'), 'helperPod.yaml': 'kind: Pod' });
    await vi.waitFor(() => expect(source.current().helperPodYaml).toBe('kind: Pod'));
    expect(changed.map(pathsOf)).toEqual([['/opt/b'], ['/opt/b']]);
    expect(changed[1]?.config).toBe(changed[0]?.config);
  });

  it('rejects a bad update and keeps the last good config', async () => {
    kit.store.create('configmaps', configMap({ 'config.json': config('/opt/a') }));
    const { source, changed, rejected, events } = await started();
    setData({ 'config.json': json({ nodePathMap: [{ node: 'n', paths: ['/x'] }, { node: 'n' }] }) });
    await vi.waitFor(() => expect(rejected).toHaveLength(1));
    expect(rejected[0]?.upstream).toBe('StorageClass config canonicalization failed: duplicate node n');
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(new RegExp(`^ConfigMap ${NS}/${NAME} Warning InvalidConfig: .*duplicate node n`));
    setData({ other: 'x' });
    await vi.waitFor(() => expect(rejected).toHaveLength(2));
    expect(rejected[1]?.code).toBe('no-config');
    setData({ other: 'y' });
    kit.server.dropWatches();
    setData({ other: 'z' });
    await vi.waitFor(() => expect(kit.store.get('configmaps', NS, NAME)?.data).toEqual({ other: 'z' }));
    setData({ 'config.json': config('/opt/c') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/c']));
    expect(changed).toHaveLength(1);
    // The missing key was reported once, however often the keyless ConfigMap was seen.
    expect(rejected).toHaveLength(2);
  });

  it('keeps the last good config when the ConfigMap is deleted, and applies it when recreated', async () => {
    kit.store.create('configmaps', configMap({ 'config.json': config('/opt/a') }));
    const { source, rejected } = await started();
    kit.store.delete('configmaps', NS, NAME);
    await vi.waitFor(() => expect(rejected).toHaveLength(1));
    expect(rejected[0]?.upstream).toBe(`ConfigMap ${NS}/${NAME} deleted`);
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    kit.store.create('configmaps', configMap({ 'config.json': config('/opt/b') }));
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']));
    expect(rejected).toHaveLength(1);
  });

  it('survives dropped watches', async () => {
    kit.store.create('configmaps', configMap({ 'config.json': config('/opt/a') }));
    const { source, changed } = await started();
    await vi.waitFor(() => expect(kit.server.dropWatches('configmaps')).toBeGreaterThan(0));
    setData({ 'config.json': config('/opt/b') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']));
    kit.server.dropWatches();
    setData({ 'config.json': config('/opt/c') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/c']));
    expect(changed.map(pathsOf)).toEqual([['/opt/b'], ['/opt/c']]);
  });
});
