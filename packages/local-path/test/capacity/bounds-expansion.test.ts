/**
 * Size bounds and expansion on both tiers: claims outside `minSize`/`maxSize` (StorageClass parameters, or the
 * class's config) are refused with nothing created; a bound claim of an expandable class grows within its path's
 * budget, and a growth beyond it is refused with a Warning Event.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ANN_SELECTED_NODE as SELECTED_NODE } from '@kprov/provisioner-lib';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { VOLUME_RESIZE_FAILED, VOLUME_RESIZE_SUCCESSFUL } from '../../src/capacity/expansion.js';
import {
  claim,
  eventsFor,
  getClaim,
  getVolume,
  perTest,
  provisioningFailure,
  storageClass,
  WAIT,
  waitBound,
} from '../provisioner/helpers.js';

const NODES = [{ name: 'node-1' }, { name: 'node-2' }];
const PATHS = [
  { node: 'node-1', paths: [{ path: '/data/a', capacity: '1Gi' }] },
  { node: 'node-2', paths: ['/data/unbudgeted'] },
];

function claimOn(name: string, size: string, node: string, className = 'local-path') {
  const c = claim(name, className, { resources: { requests: { storage: size } } });
  c.metadata!.annotations = { [SELECTED_NODE]: node };
  return c;
}

const { env } = perTest();

describeTiers('size bounds and expansion', () => {
  it('refuses claims outside the minSize and maxSize parameters, creating nothing', async () => {
    const e = await env({ nodes: NODES, config: { nodePathMap: PATHS }, capacity: {} });
    await e.storage.createStorageClass({
      body: storageClass('bounded', { parameters: { minSize: '100Mi', maxSize: '512Mi' } }),
    });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('tiny', '50Mi', 'node-1', 'bounded'),
    });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('big', '600Mi', 'node-1', 'bounded'),
    });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('right', '200Mi', 'node-1', 'bounded'),
    });
    expect(await provisioningFailure(e, 'tiny')).toContain(
      'the claim default/tiny requests 50Mi, less than the minimum 100Mi (parameter minSize of StorageClass "bounded")',
    );
    expect(await provisioningFailure(e, 'big')).toContain(
      'the claim default/big requests 600Mi, more than the maximum 512Mi (parameter maxSize of StorageClass "bounded")',
    );
    const pvName = await waitBound(e, 'right');
    expect((await e.read.volumes()).map((v) => v.metadata?.name)).toEqual([pvName]);
    expect([...e.helperPods].every((p) => p.endsWith(pvName))).toBe(true);
  });

  it("refuses claims outside the bounds of the class's config", async () => {
    const e = await env({
      nodes: NODES,
      config: { storageClassConfigs: { 'local-path': { nodePathMap: PATHS, minSize: '1Gi' } } },
      capacity: {},
    });
    await e.storage.createStorageClass({ body: storageClass() });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('small', '128Mi', 'node-2'),
    });
    expect(await provisioningFailure(e, 'small')).toContain(
      'the claim default/small requests 128Mi, less than the minimum 1Gi (minSize of the config of StorageClass "local-path")',
    );
    expect(await e.read.volumes()).toEqual([]);
    expect(e.helperPods.size).toBe(0);
  });

  it('expands a bound claim within its budget, and refuses with an event beyond it', async () => {
    const e = await env({ nodes: NODES, config: { nodePathMap: PATHS }, capacity: {} });
    await e.storage.createStorageClass({ body: storageClass('local-path', { allowVolumeExpansion: true }) });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('grow', '256Mi', 'node-1'),
    });
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('other', '256Mi', 'node-1'),
    });
    const pvName = await waitBound(e, 'grow');
    await waitBound(e, 'other');
    const resize = (size: string) =>
      e.core.patchNamespacedPersistentVolumeClaim(
        {
          name: 'grow',
          namespace: 'default',
          body: { spec: { resources: { requests: { storage: size } } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );

    // 512Mi + the other 256Mi fit in 1Gi.
    await resize('512Mi');
    await vi.waitFor(async () => {
      expect((await getVolume(e, pvName))?.spec?.capacity?.storage).toBe('512Mi');
      expect((await getClaim(e, 'grow'))?.status?.capacity?.storage).toBe('512Mi');
    }, WAIT);
    const [done] = await eventsFor(e, 'PersistentVolumeClaim', 'grow', VOLUME_RESIZE_SUCCESSFUL);
    expect(done?.type).toBe('Normal');

    // 900Mi does not: 1Gi − 256Mi leaves 768Mi.
    await resize('900Mi');
    const message = await vi.waitFor(async () => {
      const [event] = await eventsFor(e, 'PersistentVolumeClaim', 'grow', VOLUME_RESIZE_FAILED);
      if (event === undefined) throw new Error('no VolumeResizeFailed event yet');
      expect(event.type).toBe('Warning');
      return event.message ?? '';
    }, WAIT);
    expect(message).toBe(
      `cannot expand volume ${pvName} from 512Mi to 900Mi: not enough space on node node-1: /data/a has 256Mi free ` +
        '(capacity 1Gi, 768Mi allocated to 2 volumes), the expansion needs 388Mi more',
    );
    expect((await getVolume(e, pvName))?.spec?.capacity?.storage).toBe('512Mi');
    expect((await getClaim(e, 'grow'))?.status?.capacity?.storage).toBe('512Mi');
    // kube-controller-manager's expand controller leaves the claim to an external resizer, and says so; nothing
    // else of it shows.
    const waiting = await eventsFor(e, 'PersistentVolumeClaim', 'grow', 'ExternalExpanding');
    expect(waiting.map((ev) => [ev.type, ev.source?.component, ev.message])).toEqual([
      ['Normal', 'volume_expand', 'waiting for an external controller to expand this PVC'],
    ]);
    expect((await getClaim(e, 'grow'))?.status?.conditions ?? []).toEqual([]);

    // A path without a capacity takes any expansion.
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: claimOn('free', '1Gi', 'node-2'),
    });
    const freePv = await waitBound(e, 'free');
    await e.core.patchNamespacedPersistentVolumeClaim(
      { name: 'free', namespace: 'default', body: { spec: { resources: { requests: { storage: '10Gi' } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await vi.waitFor(async () => {
      expect((await getVolume(e, freePv))?.spec?.capacity?.storage).toBe('10Gi');
      expect((await getClaim(e, 'free'))?.status?.capacity?.storage).toBe('10Gi');
    }, WAIT);
  });
});
