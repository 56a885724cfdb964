/**
 * `stripManagedFields` as an informer's transform, and informerFor's `stripManagedFields` option (left out as the
 * objects are read), against the server that sets managedFields: the cached claims keep everything else. Real tier
 * only: the testkit serves objects without managedFields.
 */
import { CoreV1Api, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describeTiers, WAIT } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { informerFor, type InformerForOptions } from '../../src/cache/informer.js';
import { stripManagedFields } from '../../src/cache/managed-fields.js';

const claim = (name: string): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, labels: { app: name }, annotations: { note: name } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: 'none' },
});

const ways: [string, InformerForOptions<V1PersistentVolumeClaim>][] = [
  ['stripManagedFields as the transform', { transform: stripManagedFields }],
  ['the stripManagedFields option', { stripManagedFields: true }],
];

describeTiers(
  'a claims informer leaving managedFields out',
  (tier) => {
    it.each(ways)(
      'caches listed and watched claims without managedFields, and the rest of their metadata as served (%s)',
      async (_way, options) => {
        const c = await tier.start({ nodes: [] });
        const core = c.kubeConfig.makeApiClient(CoreV1Api);
        await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('listed') });
        const informer = informerFor(c.kubeConfig, 'PersistentVolumeClaim', options);
        const stop = new AbortController();
        const running = informer.run(stop.signal);
        tier.defer(async () => {
          stop.abort();
          await running;
        });
        await informer.waitForSync(stop.signal);
        // Created after the list: it comes through the watch.
        await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('watched') });
        await vi.waitFor(() => expect(informer.store.get('default/watched')).toBeDefined(), WAIT);
        for (const name of ['listed', 'watched']) {
          const served = await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name });
          expect(served.metadata?.managedFields?.length).toBeGreaterThan(0);
          const cached = informer.store.get(`default/${name}`)?.metadata;
          expect(cached).toBeDefined();
          expect(Object.keys(cached ?? {})).not.toContain('managedFields');
          expect(cached).toMatchObject({
            name,
            namespace: 'default',
            uid: served.metadata?.uid,
            labels: { app: name },
            annotations: { note: name },
          });
          expect(cached?.creationTimestamp).toEqual(served.metadata?.creationTimestamp);
        }
      },
    );
  },
  { tiers: ['real'] },
);
