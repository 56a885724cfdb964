/**
 * The Go library's TestControllerSharedInformers (controller_test.go, v13).
 *
 * Difference from Go: the Go test builds the claim, volume and class informers from a client-go shared informer
 * factory (resync 1 s), passes them in with the ClaimsInformer/VolumesInformer/ClassesInformer options and starts
 * the factory itself. This port has no shared-informer options: the controller always runs its own informers. The
 * two cases are therefore run end to end through the harness (the controller's own informers, with the same 1 s
 * resync as the Go factory), checking the same outcomes: the PV is provisioned, and the released PV is deleted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PROVISIONER, expectedProvisionedVolume, newClaim, newStorageClass, newVolume, testProvisioner } from './fixtures.js';
import { startHarness, type Harness } from './harness.js';

/** Go `sharedResyncPeriod`. */
const SHARED_RESYNC_MS = 1_000;

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('TestControllerSharedInformers', () => {
  it('provision for claim-1 with v1 storage class', async () => {
    // Go newStorageClassWithReclaimPolicy("class-1", "foo.bar/baz", Delete).
    const cls = newStorageClass('class-1', PROVISIONER, { reclaimPolicy: 'Delete' });
    const claim = newClaim('claim-1', 'uid-1-1', 'class-1', PROVISIONER, '');
    h = await startHarness(testProvisioner(), { classes: [cls], claims: [claim] }, { resyncPeriodMs: SHARED_RESYNC_MS });
    await expect.poll(() => h?.volumes().length, { timeout: 10_000 }).toBe(1);
    await h.settle();
    // Go newProvisionedVolumeWithReclaimPolicy: reclaim policy from the class.
    expect(h.volumes()).toHaveLength(1);
    expect(h.volumes()[0]).toMatchObject(expectedProvisionedVolume(cls, claim, { policy: 'Delete' }));
  });

  it('delete volume-1', async () => {
    const provisioner = testProvisioner();
    h = await startHarness(
      provisioner,
      { volumes: [newVolume('volume-1', 'Released', 'Delete', { 'pv.kubernetes.io/provisioned-by': PROVISIONER })] },
      { resyncPeriodMs: SHARED_RESYNC_MS },
    );
    await expect.poll(() => h?.volumes().length, { timeout: 10_000 }).toBe(0);
    expect(provisioner.deleted).toContain('volume-1');
  });
});
