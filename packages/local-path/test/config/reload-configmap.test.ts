import { Backoff } from '@kprov/provisioner-lib';
import type { Cluster } from '@kprov/testkit';
import { currentTier, describeTiers, WAIT } from '@kprov/testkit/vitest';
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { beforeEach, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { ConfigMapConfigSource, type ConfigSnapshot } from '../../src/config/reload.js';
import { json } from './helpers.js';

const NS = 'local-path-storage';
const NAME = 'local-path-config';

let cluster: Cluster;
let core: CoreV1Api;

const config = (path: string): string =>
  json({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [path] }] });
const pathsOf = (s: ConfigSnapshot): readonly string[] | undefined =>
  s.config.defaultConfig?.nodePathMap.get('DEFAULT_PATH_FOR_NON_LISTED_NODES');

async function createConfigMap(data: Record<string, string>, name = NAME): Promise<void> {
  const body: V1ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data };
  await core.createNamespacedConfigMap({ namespace: NS, body });
}

async function setData(data: Record<string, string>): Promise<void> {
  const cm = await core.readNamespacedConfigMap({ namespace: NS, name: NAME });
  await core.replaceNamespacedConfigMap({ namespace: NS, name: NAME, body: { ...cm, data } });
}

/** Cuts the watches: the testkit drops them; a real kube-apiserver is stopped and started again. */
async function dropWatches(): Promise<void> {
  if (cluster.testkit !== undefined) {
    await vi.waitFor(() => expect(cluster.testkit!.server.dropWatches('configmaps')).toBeGreaterThan(0), WAIT);
    return;
  }
  await cluster.stopApiServer();
  await cluster.startApiServer();
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
    { kubeConfig: cluster.kubeConfig, namespace: NS, name: NAME },
    {
      watcher: { backoff: new Backoff({ initialMs: 10, maxMs: 50 }) },
      recorder: {
        event: (ref, type, reason, message) =>
          events.push(`${ref.kind} ${ref.namespace ?? ''}/${ref.name} ${type} ${reason}: ${message}`),
      },
    },
  );
  const changed: ConfigSnapshot[] = [];
  const rejected: ConfigError[] = [];
  source.on('changed', (s) => changed.push(s));
  source.on('rejected', (e) => rejected.push(e));
  const controller = new AbortController();
  currentTier().defer(async () => {
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

describeTiers('ConfigMapConfigSource', (tier) => {
  beforeEach(async () => {
    cluster = await tier.start({
      nodes: [],
      namespaces: [NS],
      testkit: { binder: false, scheduler: false, kubelet: false },
    });
    core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  });

  it('loads config.json and the other keys at start', async () => {
    await createConfigMap({ other: 'x' }, 'unrelated');
    await createConfigMap({
      'config.json': config('/opt/a/'),
      'helperPod.yaml': 'kind: Pod',
      setup: '#!/bin/sh',
      teardown: 'rm -rf',
    });
    const { source } = await started();
    const s = source.current();
    expect(pathsOf(s)).toEqual(['/opt/a']);
    expect(s).toMatchObject({ helperPodYaml: 'kind: Pod', setup: '#!/bin/sh', teardown: 'rm -rf' });
  });

  it('rejects start when the ConfigMap, its key or its config is missing or bad', async () => {
    await expect(create().start()).rejects.toMatchObject({
      upstream: `invalid empty flag config and it also does not exist at ConfigMap ${NS}/${NAME} with err: configmaps "${NAME}" not found`,
    });
    await createConfigMap({});
    await expect(create().start()).rejects.toMatchObject({
      upstream: expect.stringContaining('config.json is not exist in local-path-config ConfigMap') as unknown,
    });
    await setData({ 'config.json': '[' });
    const err: unknown = await create()
      .start()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('invalid-json');
  });

  it('applies an update', async () => {
    await createConfigMap({ 'config.json': config('/opt/a') });
    const { source, changed } = await started();
    await setData({ 'config.json': config('/opt/b') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
    await setData({ 'config.json': config('/opt/b'), 'helperPod.yaml': 'kind: Pod' });
    await vi.waitFor(() => expect(source.current().helperPodYaml).toBe('kind: Pod'), WAIT);
    expect(changed.map(pathsOf)).toEqual([['/opt/b'], ['/opt/b']]);
    expect(changed[1]?.config).toBe(changed[0]?.config);
  });

  it('rejects a bad update and keeps the last good config', async () => {
    await createConfigMap({ 'config.json': config('/opt/a') });
    const { source, changed, rejected, events } = await started();
    await setData({ 'config.json': json({ nodePathMap: [{ node: 'n', paths: ['/x'] }, { node: 'n' }] }) });
    await vi.waitFor(() => expect(rejected).toHaveLength(1), WAIT);
    expect(rejected[0]?.upstream).toBe('StorageClass config canonicalization failed: duplicate node n');
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatch(new RegExp(`^ConfigMap ${NS}/${NAME} Warning InvalidConfig: .*duplicate node n`));
    await setData({ other: 'x' });
    await vi.waitFor(() => expect(rejected).toHaveLength(2), WAIT);
    expect(rejected[1]?.code).toBe('no-config');
    await setData({ other: 'y' });
    await dropWatches();
    await setData({ other: 'z' });
    await setData({ 'config.json': config('/opt/c') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/c']), WAIT);
    expect(changed).toHaveLength(1);
    // The missing key was reported once, however often the keyless ConfigMap was seen.
    expect(rejected).toHaveLength(2);
  });

  it('keeps the last good config when the ConfigMap is deleted, and applies it when recreated', async () => {
    await createConfigMap({ 'config.json': config('/opt/a') });
    const { source, rejected } = await started();
    await core.deleteNamespacedConfigMap({ namespace: NS, name: NAME });
    await vi.waitFor(() => expect(rejected).toHaveLength(1), WAIT);
    expect(rejected[0]?.upstream).toBe(`ConfigMap ${NS}/${NAME} deleted`);
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    await createConfigMap({ 'config.json': config('/opt/b') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
    expect(rejected).toHaveLength(1);
  });

  it('survives dropped watches', async () => {
    await createConfigMap({ 'config.json': config('/opt/a') });
    const { source, changed } = await started();
    await dropWatches();
    await setData({ 'config.json': config('/opt/b') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
    await dropWatches();
    await setData({ 'config.json': config('/opt/c') });
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/c']), WAIT);
    expect(changed.map(pathsOf)).toEqual([['/opt/b'], ['/opt/c']]);
  });
});
