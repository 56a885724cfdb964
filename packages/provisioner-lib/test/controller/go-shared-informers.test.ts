/**
 * The Go library's TestControllerSharedInformers (controller_test.go, v13): the claim, volume and class informers come
 * from the test (Go: a shared informer factory with a 1 s resync), are passed in with the claimsInformer,
 * volumesInformer and classesInformer options, and are started by the test, not by the controller.
 */
import type { Testkit } from '@kprov/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { informerFor } from '../../src/cache/informer.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import {
  PROVISIONER,
  expectedProvisionedVolume,
  newClaim,
  newStorageClass,
  newVolume,
  testProvisioner,
} from './fixtures.js';
import { startHarness, type Harness } from './harness.js';

/** Go `sharedResyncPeriod`. */
const SHARED_RESYNC_MS = 1_000;

let h: Harness | undefined;
const factory = new Set<AbortController>();
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const stop of factory) stop.abort();
  factory.clear();
});

/** Go's `informerFactory.Start`: the three informers with the shared resync, run by the test, given to the controller. */
function sharedInformers(options: Partial<ProvisionControllerOptions>): (kit: Testkit) => void {
  return (kit) => {
    const common = { resyncPeriodMs: SHARED_RESYNC_MS };
    const claims = informerFor(kit.kubeConfig, 'PersistentVolumeClaim', common);
    const volumes = informerFor(kit.kubeConfig, 'PersistentVolume', common);
    const classes = informerFor(kit.kubeConfig, 'StorageClass', common);
    const stop = new AbortController();
    factory.add(stop);
    void claims.run(stop.signal);
    void volumes.run(stop.signal);
    void classes.run(stop.signal);
    Object.assign(options, { claimsInformer: claims, volumesInformer: volumes, classesInformer: classes });
  };
}

describe('TestControllerSharedInformers', () => {
  it('provision for claim-1 with v1 storage class', async () => {
    // Go newStorageClassWithReclaimPolicy("class-1", "foo.bar/baz", Delete).
    const cls = newStorageClass('class-1', PROVISIONER, { reclaimPolicy: 'Delete' });
    const claim = newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, '');
    const options: Partial<ProvisionControllerOptions> = {};
    h = await startHarness(testProvisioner(), { classes: [cls], claims: [claim] }, options, sharedInformers(options));
    await expect.poll(() => h?.volumes().length, WAIT).toBe(1);
    await h.settle();
    // Go newProvisionedVolumeWithReclaimPolicy: reclaim policy from the class.
    expect(h.volumes()).toHaveLength(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim, { policy: 'Delete' }));
  });

  it('delete volume-1', async () => {
    const provisioner = testProvisioner();
    const options: Partial<ProvisionControllerOptions> = {};
    h = await startHarness(
      provisioner,
      { volumes: [newVolume('volume-1', 'Released', 'Delete', { 'pv.kubernetes.io/provisioned-by': PROVISIONER })] },
      options,
      sharedInformers(options),
    );
    await expect.poll(() => h?.volumes().length, WAIT).toBe(0);
    expect(provisioner.deleted).toContain('volume-1');
  });
});
