/**
 * `restListFn`: an informer of a kind `informerFor` does not know (ConfigMaps of one namespace here), listed page by
 * page through the library's client with each item slimmed by its decoder, then kept up to date by the watch.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { startApiServer, type KubeObject, type Testkit } from '@kprov/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { Informer, type InformerOptions } from '../../src/cache/informer.js';
import { restListFn } from '../../src/cache/rest-list.js';
import { closeSharedConnections } from '../../src/client/agent.js';
import { RestClient } from '../../src/client/rest.js';

const PATH = '/api/v1/namespaces/default/configmaps';

function configMap(name: string, size = 'small'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { size } },
    data: { payload: 'x'.repeat(1000) },
  };
}

/** A ConfigMap as the cache keeps it: name, namespace, resourceVersion and labels, no data. */
function slim(raw: unknown): V1ConfigMap {
  const { name, namespace, resourceVersion, labels } = (raw as V1ConfigMap).metadata ?? {};
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion, labels } };
}

/** An informer of the ConfigMaps at {@link PATH}, slimmed, listed with `restListFn` and watched through `rest`. */
function configMapInformer(rest: RestClient, options: Partial<InformerOptions<V1ConfigMap>>): Informer<V1ConfigMap> {
  return new Informer<V1ConfigMap>({
    path: PATH,
    list: restListFn(rest, PATH, slim),
    watch: rest,
    decode: slim,
    ...options,
  });
}

describe('restListFn', () => {
  let kit: Testkit;
  let controller: AbortController;
  let done: Promise<void>;

  beforeEach(() => {
    controller = new AbortController();
    done = Promise.resolve();
  });

  afterEach(async () => {
    controller.abort();
    await done;
    await closeSharedConnections(kit.kubeConfig);
    await kit.stop();
  });

  it('lists page by page with continue tokens, each item decoded, then follows the watch', async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    for (let i = 0; i < 5; i++) kit.store.create('configmaps', configMap(`cm-${i}`));
    const rest = new RestClient(kit.kubeConfig);
    const informer = configMapInformer(rest, { pageSize: 2 });
    done = informer.run(controller.signal);
    await informer.waitForSync(controller.signal);

    // Three pages of at most two, the second and third asked for with the continue token of the one before.
    expect(kit.server.requestCounts()['list configmaps']).toBe(3);
    expect(informer.store.keys().sort()).toEqual([0, 1, 2, 3, 4].map((i) => `default/cm-${i}`));
    const first = informer.store.get('default/cm-0');
    expect(first).toEqual(slim(kit.store.get('configmaps', 'default', 'cm-0')));
    expect(first).not.toHaveProperty('data');

    kit.store.create('configmaps', configMap('cm-5', 'large'));
    await vi.waitFor(
      () => expect(informer.store.get('default/cm-5')?.metadata?.labels).toEqual({ size: 'large' }),
      WAIT,
    );
    expect(informer.store.get('default/cm-5')).not.toHaveProperty('data');
  });

  it('sends the selectors of the informer with each page', async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    kit.store.create('configmaps', configMap('a', 'small'));
    kit.store.create('configmaps', configMap('b', 'large'));
    kit.store.create('configmaps', configMap('c', 'large'));
    kit.store.create('configmaps', configMap('d', 'small'));
    const informer = configMapInformer(new RestClient(kit.kubeConfig), { labelSelector: 'size=large', pageSize: 1 });
    done = informer.run(controller.signal);
    await informer.waitForSync(controller.signal);
    expect(informer.store.keys().sort()).toEqual(['default/b', 'default/c']);
    // One page per large ConfigMap: the small ones were left out by the server on every page.
    expect(kit.server.requestCounts()['list configmaps']).toBe(2);
  });
});
