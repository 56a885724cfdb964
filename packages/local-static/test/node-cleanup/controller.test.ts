/**
 * The node-cleanup controller on both tiers, its delay on a fake clock: a deleted Node's claims are warned about and
 * deleted after the delay unless the Node came back, only for opted-in classes and PVs pinned to named nodes, never a
 * claim made again under the same name; the PVs of deleted Nodes are deleted when Available or Released with policy
 * Delete; what was stale before the start, or became stale without a Node deletion, is found too.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import { NODE_CLEANUP_METRIC_NAMES } from '../../src/node-cleanup/metrics.js';
import {
  bindClaim,
  boundVolume,
  createNode,
  createVolume,
  DELAY_MS,
  deleteNode,
  FAST,
  hostnameTerm,
  metricValue,
  nodeDeletedEvents,
  OTHER,
  startController,
  startEnv,
  waitClaimGone,
  waitNodeDeletedEvent,
  WAIT,
} from './helpers.js';

const MESSAGE = "PVC is tied to a deleted Node. PVC will be cleaned up in 1m0s if the Node doesn't come back";

describeTiers('node-cleanup controller', () => {
  it('warns on the claims of a deleted node, deletes them after the delay, then the PV a Delete policy releases; a Retain PV stays Released', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    const claim = await boundVolume(e, 'pv-delete', 'data-0', FAST, 'node-1');
    await boundVolume(e, 'pv-retain', 'data-1', FAST, 'node-1', { policy: 'Retain' });
    const c = await startController(e);

    await deleteNode(e, 'node-1');
    const event = await waitNodeDeletedEvent(e, 'data-0');
    expect(event).toMatchObject({
      type: 'Warning',
      message: MESSAGE,
      involvedObject: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data-0', uid: claim.metadata!.uid },
      source: { component: 'cleanup-controller' },
    });
    await waitNodeDeletedEvent(e, 'data-1');
    expect(await e.read.claim('data-0')).toBeDefined();

    c.clock.advance(DELAY_MS);
    expect(await c.outcome('pv-delete')).toBe('claim-deleted');
    expect(await c.outcome('pv-retain')).toBe('claim-deleted');
    await waitClaimGone(e, 'data-0');
    await waitClaimGone(e, 'data-1');

    // The PVs are released; the deleter deletes the one whose policy is Delete, and leaves the Retain one.
    await c.waitVolumeGone('pv-delete');
    await vi.waitFor(async () => expect((await e.read.volume('pv-retain'))?.status?.phase).toBe('Released'), WAIT);
    await c.passes();
    expect(await e.read.volume('pv-retain')).toBeDefined();
    const metrics = await c.metrics();
    expect(metricValue(metrics, NODE_CLEANUP_METRIC_NAMES.claimDelete)).toBe(2);
    expect(metricValue(metrics, NODE_CLEANUP_METRIC_NAMES.claimDeleteFailed)).toBe(0);
    expect(metricValue(metrics, `${NODE_CLEANUP_METRIC_NAMES.volumeDelete}{phase="Released"}`)).toBe(1);
    // One Event per claim: the deletion of the Node was acted on once.
    expect((await nodeDeletedEvents(e, 'data-0')).map((ev) => ev.count)).toEqual([1]);
  });

  it('leaves the claim when the node comes back within the delay', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
    const c = await startController(e);

    await deleteNode(e, 'node-1');
    await waitNodeDeletedEvent(e, 'data-0');
    await createNode(e, 'node-1');
    c.clock.advance(DELAY_MS);
    expect(await c.outcome('pv-1')).toBe('node-exists');
    expect((await e.read.claim('data-0'))?.status?.phase).toBe('Bound');
    expect((await e.read.volume('pv-1'))?.status?.phase).toBe('Bound');
    expect(metricValue(await c.metrics(), NODE_CLEANUP_METRIC_NAMES.claimDelete)).toBe(0);

    // Deleted again later: warned about again, and cleaned up this time.
    await deleteNode(e, 'node-1');
    await vi.waitFor(
      async () => expect((await nodeDeletedEvents(e, 'data-0')).map((ev) => ev.count)).toEqual([2]),
      WAIT,
    );
    c.clock.advance(DELAY_MS);
    expect(await c.outcome('pv-1', 2)).toBe('claim-deleted');
    await waitClaimGone(e, 'data-0');
  });

  it('touches only local PVs of opted-in classes that are pinned to named nodes', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    await boundVolume(e, 'pv-fast', 'fast-0', FAST, 'node-1');
    await boundVolume(e, 'pv-other', 'other-0', OTHER, 'node-1');
    // Also reachable from every node of a zone (a class's `selector`): it does not go with node-1.
    const zone = { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a'] }] };
    await boundVolume(e, 'pv-zone', 'zone-0', FAST, 'node-1', { terms: [hostnameTerm('node-1'), zone] });
    // Unbound: the deleter's. Available ones go whatever their policy; not those of other classes or not pinned.
    await createVolume(e, 'pv-free', FAST, 'node-1', { policy: 'Retain' });
    await createVolume(e, 'pv-free-other', OTHER, 'node-1');
    await createVolume(e, 'pv-free-zone', FAST, 'node-1', { terms: [hostnameTerm('node-1'), zone] });
    const c = await startController(e);

    await deleteNode(e, 'node-1');
    await waitNodeDeletedEvent(e, 'fast-0');
    c.clock.advance(DELAY_MS);
    await waitClaimGone(e, 'fast-0');
    await c.waitVolumeGone('pv-free');
    await c.waitVolumeGone('pv-fast');
    await c.passes();

    expect(await nodeDeletedEvents(e, 'other-0')).toEqual([]);
    expect(await nodeDeletedEvents(e, 'zone-0')).toEqual([]);
    expect([...c.outcomes.keys()]).toEqual(['pv-fast']);
    for (const claim of ['other-0', 'zone-0']) expect((await e.read.claim(claim))?.status?.phase).toBe('Bound');
    for (const pv of ['pv-other', 'pv-zone', 'pv-free-other', 'pv-free-zone'])
      expect(await e.read.volume(pv)).toBeDefined();
    const metrics = await c.metrics();
    expect(metricValue(metrics, `${NODE_CLEANUP_METRIC_NAMES.volumeDelete}{phase="Available"}`)).toBe(1);
    expect(metricValue(metrics, `${NODE_CLEANUP_METRIC_NAMES.volumeDelete}{phase="Released"}`)).toBe(1);
  });

  it('cleans nothing when no class is opted in', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
    await createVolume(e, 'pv-free', FAST, 'node-1');
    const c = await startController(e, []);
    await deleteNode(e, 'node-1');
    c.clock.advance(DELAY_MS);
    await c.passes();
    expect(await nodeDeletedEvents(e, 'data-0')).toEqual([]);
    expect(c.outcomes.size).toBe(0);
    expect((await e.read.claim('data-0'))?.status?.phase).toBe('Bound');
    expect((await e.read.volume('pv-free'))?.status?.phase).toBe('Available');
  });

  it('finds a node by its kubernetes.io/hostname label when its name differs', async () => {
    const e = await startEnv();
    // As on AWS: the Node's name is not its hostname, which local-volume-provisioner pins PVs to.
    await createNode(e, 'ip-10-0-0-7.ec2.internal', 'ip-10-0-0-7');
    await createNode(e, 'node-2');
    await boundVolume(e, 'pv-aws', 'aws-0', FAST, 'ip-10-0-0-7');
    await boundVolume(e, 'pv-2', 'data-2', FAST, 'node-2');
    const c = await startController(e);

    await deleteNode(e, 'node-2');
    await waitNodeDeletedEvent(e, 'data-2');
    c.clock.advance(DELAY_MS);
    await waitClaimGone(e, 'data-2');
    await c.passes();
    expect(await nodeDeletedEvents(e, 'aws-0')).toEqual([]);
    expect((await e.read.claim('aws-0'))?.status?.phase).toBe('Bound');

    await deleteNode(e, 'ip-10-0-0-7.ec2.internal');
    await waitNodeDeletedEvent(e, 'aws-0');
    c.clock.advance(DELAY_MS);
    expect(await c.outcome('pv-aws')).toBe('claim-deleted');
    await waitClaimGone(e, 'aws-0');
  });

  it('does not delete a claim made again under the same name', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    const first = await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
    const c = await startController(e);

    await deleteNode(e, 'node-1');
    await waitNodeDeletedEvent(e, 'data-0');
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-0', namespace: 'default' });
    await waitClaimGone(e, 'data-0');
    // Made again, naming the same PV: the PV's claimRef still has the first claim's UID.
    await e.core.createNamespacedPersistentVolumeClaim({
      namespace: 'default',
      body: { ...first, metadata: { name: 'data-0', namespace: 'default' }, status: {} },
    });
    const second = await vi.waitFor(async () => {
      const claim = await e.read.claim('data-0');
      if (claim === undefined) throw new Error('claim data-0 not made again yet');
      return claim;
    }, WAIT);
    expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
    await c.cached(() => c.nodeCleanup.claims.store.get('default/data-0')?.metadata?.uid === second.metadata?.uid);
    c.clock.advance(DELAY_MS);
    expect(await c.outcome('pv-1')).toBe('claim-changed');
    expect((await e.read.claim('data-0'))?.metadata?.uid).toBe(second.metadata?.uid);
    expect(metricValue(await c.metrics(), NODE_CLEANUP_METRIC_NAMES.claimDelete)).toBe(0);
  });

  it('gives a claim bound to the PV since the whole delay it was told', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
    await boundVolume(e, 'pv-2', 'data-1', FAST, 'node-1');
    const c = await startController(e, [FAST], { resyncMs: 30_000 });
    await deleteNode(e, 'node-1');
    await waitNodeDeletedEvent(e, 'data-0');
    await waitNodeDeletedEvent(e, 'data-1');

    // pv-1 changes hands while it waits: its claim is deleted, an admin frees it, another claim binds it.
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'data-0', namespace: 'default' });
    await waitClaimGone(e, 'data-0');
    await vi.waitFor(async () => expect((await e.read.volume('pv-1'))?.status?.phase).toBe('Released'), WAIT);
    await e.core.patchPersistentVolume(
      { name: 'pv-1', body: [{ op: 'remove', path: '/spec/claimRef' }] },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
    const claim = await bindClaim(e, 'data-2', FAST, 'pv-1');
    await c.cached(() => c.nodeCleanup.volumes.store.get('pv-1')?.spec?.claimRef?.uid === claim.metadata?.uid);

    c.clock.advance(30_000);
    await waitNodeDeletedEvent(e, 'data-2');
    c.clock.advance(30_000);
    expect(await c.outcome('pv-2')).toBe('claim-deleted');
    c.clock.advance(30_000);
    expect(await c.outcome('pv-1')).toBe('claim-deleted');
    await waitClaimGone(e, 'data-2');
    // Told at 30 s that it had 60 s: deleted at 90 s, not when pv-1's first wait ended (60 s).
    expect(c.syncedAt.get('pv-1')).toEqual([90_000]);
  });

  it('finds at the start the PVs of nodes deleted before', async () => {
    const e = await startEnv();
    await createNode(e, 'node-1');
    await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1', { policy: 'Retain' });
    await createVolume(e, 'pv-free', FAST, 'node-1');
    await deleteNode(e, 'node-1');

    const c = await startController(e);
    await waitNodeDeletedEvent(e, 'data-0');
    // The deleter's first pass runs at the start.
    await vi.waitFor(async () => expect(await e.read.volume('pv-free')).toBeUndefined(), WAIT);
    c.clock.advance(DELAY_MS);
    await waitClaimGone(e, 'data-0');
    await vi.waitFor(async () => expect((await e.read.volume('pv-1'))?.status?.phase).toBe('Released'), WAIT);
  });

  it('finds at --resync a PV bound after its node was deleted', async () => {
    const e = await startEnv();
    const c = await startController(e, [FAST], { resyncMs: 120_000 });
    await createNode(e, 'node-1');
    await deleteNode(e, 'node-1');
    // No Node deletion comes after this PV is bound; the deleter does not pass while the clock stands still.
    await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
    await c.cached(() => c.nodeCleanup.volumes.store.get('pv-1')?.status?.phase === 'Bound');
    c.clock.advance(120_000);
    await waitNodeDeletedEvent(e, 'data-0');
    c.clock.advance(DELAY_MS);
    expect(await c.outcome('pv-1')).toBe('claim-deleted');
    await waitClaimGone(e, 'data-0');
  });
});
