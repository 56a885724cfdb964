import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createStore, metaNamespaceKey, uidIndex } from '../../src/cache/store.js';

function obj(name: string, rv: string, extra: { namespace?: string; uid?: string } = {}): KubernetesObject {
  return {
    metadata: {
      name,
      resourceVersion: rv,
      uid: extra.uid ?? `uid-${name}`,
      ...(extra.namespace === undefined ? {} : { namespace: extra.namespace }),
    },
  };
}

describe('metaNamespaceKey', () => {
  it('is namespace/name for namespaced objects and name for cluster-scoped ones', () => {
    expect(metaNamespaceKey(obj('c', '1', { namespace: 'ns' }))).toBe('ns/c');
    expect(metaNamespaceKey(obj('pv-1', '1'))).toBe('pv-1');
  });
});

describe('Store', () => {
  it('is not synced and empty until the first InitDone', () => {
    const { store, writer } = createStore();
    expect(store.hasSynced()).toBe(false);
    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('a', '1', { namespace: 'ns' }) });
    expect(store.hasSynced()).toBe(false);
    expect(store.list()).toEqual([]);
    const changes = writer.apply({ type: 'InitDone', resourceVersion: '5' });
    expect(store.hasSynced()).toBe(true);
    expect(store.lastSyncResourceVersion).toBe('5');
    expect(store.keys()).toEqual(['ns/a']);
    expect(changes).toEqual([{ type: 'add', object: obj('a', '1', { namespace: 'ns' }) }]);
  });

  it('keeps serving the old state during a relist and swaps atomically at InitDone', () => {
    const { store, writer } = createStore();
    writer.apply({ type: 'Init' });
    for (const o of [obj('same', '1'), obj('changed', '1'), obj('gone', '1')])
      writer.apply({ type: 'InitApply', object: o });
    writer.apply({ type: 'InitDone', resourceVersion: '3' });

    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('same', '1') });
    writer.apply({ type: 'InitApply', object: obj('changed', '2') });
    writer.apply({ type: 'InitApply', object: obj('new', '4') });
    // Mid-relist: readers still see the previous list.
    expect(store.keys().sort()).toEqual(['changed', 'gone', 'same']);
    expect(store.get('changed')?.metadata?.resourceVersion).toBe('1');

    const changes = writer.apply({ type: 'InitDone', resourceVersion: '6' });
    expect(store.keys().sort()).toEqual(['changed', 'new', 'same']);
    expect(store.get('gone')).toBeUndefined();
    expect(store.hasSynced()).toBe(true);
    // Unchanged objects are not reported; vanished ones are a delete with the last cached state.
    expect(changes).toEqual(
      expect.arrayContaining([
        { type: 'update', old: obj('changed', '1'), object: obj('changed', '2') },
        { type: 'add', object: obj('new', '4') },
        { type: 'delete', object: obj('gone', '1') },
      ]),
    );
    expect(changes).toHaveLength(3);
  });

  it('starts a relist over on a second Init (a list that failed half way is discarded)', () => {
    const { store, writer } = createStore();
    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('partial', '1') });
    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('full', '2') });
    writer.apply({ type: 'InitDone', resourceVersion: '2' });
    expect(store.keys()).toEqual(['full']);
  });

  it('applies watch events as add, update and delete', () => {
    const { store, writer } = createStore();
    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitDone', resourceVersion: '1' });
    expect(writer.apply({ type: 'Apply', object: obj('a', '2') })).toEqual([{ type: 'add', object: obj('a', '2') }]);
    expect(writer.apply({ type: 'Apply', object: obj('a', '3') })).toEqual([
      { type: 'update', old: obj('a', '2'), object: obj('a', '3') },
    ]);
    expect(store.get('a')?.metadata?.resourceVersion).toBe('3');
    expect(writer.apply({ type: 'Delete', object: obj('a', '4') })).toEqual([
      { type: 'delete', object: obj('a', '4') },
    ]);
    expect(store.get('a')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('maintains indexes through updates, deletes and relists', () => {
    const { store, writer } = createStore({ indexers: { uid: uidIndex } });
    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('a', '1', { namespace: 'ns', uid: 'u1' }) });
    writer.apply({ type: 'InitDone', resourceVersion: '1' });
    expect(store.byIndex('uid', 'u1').map((o) => o.metadata?.name)).toEqual(['a']);

    // Recreated under the same name with a new uid.
    writer.apply({ type: 'Apply', object: obj('a', '2', { namespace: 'ns', uid: 'u2' }) });
    expect(store.byIndex('uid', 'u1')).toEqual([]);
    expect(store.byIndex('uid', 'u2').map((o) => o.metadata?.resourceVersion)).toEqual(['2']);

    writer.apply({ type: 'Delete', object: obj('a', '3', { namespace: 'ns', uid: 'u2' }) });
    expect(store.byIndex('uid', 'u2')).toEqual([]);

    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('b', '4', { namespace: 'ns', uid: 'u3' }) });
    writer.apply({ type: 'InitDone', resourceVersion: '4' });
    expect(store.byIndex('uid', 'u3').map((o) => o.metadata?.name)).toEqual(['b']);
    expect(() => store.byIndex('nope', 'x')).toThrow(/no index/);
  });

  it('keeps every object of an index value that many objects share, through updates and deletes', () => {
    const byNamespace = (o: KubernetesObject): string[] => [o.metadata?.namespace ?? ''];
    const { store, writer } = createStore({ indexers: { ns: byNamespace } });
    const names = (ns: string): string[] =>
      store
        .byIndex('ns', ns)
        .map((o) => o.metadata?.name ?? '')
        .sort();
    writer.apply({ type: 'Init' });
    for (const n of ['a', 'b', 'c']) writer.apply({ type: 'InitApply', object: obj(n, '1', { namespace: 'one' }) });
    writer.apply({ type: 'InitDone', resourceVersion: '1' });
    expect(names('one')).toEqual(['a', 'b', 'c']);

    // An update keeps the object once; deletes down to one object, and back up to two, keep the rest.
    writer.apply({ type: 'Apply', object: obj('a', '2', { namespace: 'one' }) });
    expect(names('one')).toEqual(['a', 'b', 'c']);
    writer.apply({ type: 'Delete', object: obj('b', '3', { namespace: 'one' }) });
    writer.apply({ type: 'Delete', object: obj('c', '3', { namespace: 'one' }) });
    expect(names('one')).toEqual(['a']);
    writer.apply({ type: 'Apply', object: obj('d', '4', { namespace: 'one' }) });
    expect(names('one')).toEqual(['a', 'd']);
    writer.apply({ type: 'Delete', object: obj('a', '5', { namespace: 'one' }) });
    writer.apply({ type: 'Delete', object: obj('d', '5', { namespace: 'one' }) });
    expect(names('one')).toEqual([]);
    writer.apply({ type: 'Apply', object: obj('e', '6', { namespace: 'one' }) });
    expect(names('one')).toEqual(['e']);
  });

  it('uses a custom key function', () => {
    const { store, writer } = createStore({ keyFunc: (o) => o.metadata?.uid ?? '' });
    writer.apply({ type: 'Init' });
    writer.apply({ type: 'InitApply', object: obj('a', '1', { uid: 'k' }) });
    writer.apply({ type: 'InitDone', resourceVersion: '1' });
    expect(store.get('k')?.metadata?.name).toBe('a');
    expect(store.keyOf(obj('z', '1', { uid: 'zz' }))).toBe('zz');
  });
});
