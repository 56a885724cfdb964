/**
 * The races upstream's node-cleanup controller loses, which the testkit tier stages with its fault injection (the
 * real tier cannot hold an informer back): a Node cache that has not seen the node come back, a PV cache that has
 * not seen the PV bound, a slow Node list at the start; and a failed claim delete, retried with backoff.
 */
import { describeTiers } from '@kprov/testkit/vitest';
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
  INTERVAL_MS,
  metricValue,
  startController,
  startEnv,
  waitClaimGone,
  waitNodeDeletedEvent,
  WAIT,
  type Env,
} from './helpers.js';

/** Keeps the controller's informer of `resource` from hearing anything new: its watch is cut, lists and watches fail. */
function freezeInformer(e: Env, resource: 'nodes' | 'persistentvolumes'): void {
  const kit = e.cluster.testkit!;
  kit.faults.add({ verb: ['list', 'watch'], resource, action: { type: 'error', code: 503 } });
  kit.server.dropWatches(resource);
}

describeTiers(
  'node-cleanup controller races',
  () => {
    it('keeps the claim of a node that came back while its Node cache still says it is gone', async () => {
      const e = await startEnv();
      await createNode(e, 'node-1');
      await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
      const c = await startController(e);
      await deleteNode(e, 'node-1');
      await waitNodeDeletedEvent(e, 'data-0');

      freezeInformer(e, 'nodes');
      await createNode(e, 'node-1');
      c.clock.advance(DELAY_MS);
      // The cache has not seen node-1 again (upstream deletes the claim here); the API server has.
      expect(await c.outcome('pv-1')).toBe('node-exists');
      expect(c.nodeCleanup.nodes.store.get('node-1')).toBeUndefined();
      expect((await e.read.claim('data-0'))?.status?.phase).toBe('Bound');
    });

    it('keeps an Available PV of a deleted node that got bound while its PV cache still says Available', async () => {
      const e = await startEnv();
      await createNode(e, 'node-1');
      await createVolume(e, 'pv-1', FAST, 'node-1');
      const c = await startController(e);

      freezeInformer(e, 'persistentvolumes');
      await deleteNode(e, 'node-1');
      await bindClaim(e, 'data-0', FAST, 'pv-1');
      await c.passes();
      // Upstream deletes the PV the cache shows Available; the resourceVersion precondition stops that delete.
      expect(c.nodeCleanup.volumes.store.get('pv-1')?.status?.phase).toBe('Available');
      const pv = await e.read.volume('pv-1');
      expect(pv?.status?.phase).toBe('Bound');
      expect(pv?.metadata?.deletionTimestamp).toBeUndefined();
      expect(metricValue(await c.metrics(), `${NODE_CLEANUP_METRIC_NAMES.volumeDelete}{phase="Available"}`)).toBe(
        undefined,
      );
    });

    it('deletes no PV while the Node list is slow at the start', async () => {
      const e = await startEnv();
      await createNode(e, 'node-1');
      await createVolume(e, 'pv-1', FAST, 'node-1');
      e.cluster.testkit!.faults.add({
        verb: 'list',
        resource: 'nodes',
        action: { type: 'latency', ms: 1500 },
        count: 1,
      });
      const c = await startController(e, [FAST], {}, { waitStarted: false });
      await c.cached(() => c.nodeCleanup.volumes.hasSynced());
      expect(c.nodeCleanup.nodes.hasSynced()).toBe(false);
      // Time passes while the PV cache is full and the Node cache still empty: upstream's deleter, started with the
      // informers, takes every node for deleted now.
      c.clock.advance(INTERVAL_MS);
      await c.started;
      await c.passes();
      expect((await e.read.volume('pv-1'))?.status?.phase).toBe('Available');
    });

    it('retries a claim delete that conflicted or failed, with backoff, and counts the failure', async () => {
      const e = await startEnv();
      await createNode(e, 'node-1');
      await boundVolume(e, 'pv-1', 'data-0', FAST, 'node-1');
      const c = await startController(e);
      // A conflict (the claim changed since it was read: looked at again, not a failure), then a failure.
      for (const code of [409, 500] as const)
        e.cluster.testkit!.faults.add({
          verb: 'delete',
          resource: 'persistentvolumeclaims',
          action: { type: 'error', code },
          count: 1,
        });
      await deleteNode(e, 'node-1');
      await waitNodeDeletedEvent(e, 'data-0');
      c.clock.advance(DELAY_MS);
      // The first retry waits on the clock (the rate limiter's backoff, 5 ms then doubling).
      await vi.waitFor(() => expect(c.nodeCleanup.controller.requeues('pv-1')).toBe(1), WAIT);
      expect(metricValue(await c.metrics(), NODE_CLEANUP_METRIC_NAMES.claimDeleteFailed)).toBe(0);
      c.clock.advance(5);
      await vi.waitFor(async () => {
        expect(metricValue(await c.metrics(), NODE_CLEANUP_METRIC_NAMES.claimDeleteFailed)).toBe(1);
      }, WAIT);
      expect(await e.read.claim('data-0')).toBeDefined();
      // The retry waits on the clock (the rate limiter's backoff).
      await vi.waitFor(async () => {
        c.clock.advance(1000);
        expect(await e.read.claim('data-0')).toBeUndefined();
      }, WAIT);
      await waitClaimGone(e, 'data-0');
      expect(await c.outcome('pv-1')).toBe('claim-deleted');
      const metrics = await c.metrics();
      expect(metricValue(metrics, NODE_CLEANUP_METRIC_NAMES.claimDelete)).toBe(1);
      expect(metricValue(metrics, NODE_CLEANUP_METRIC_NAMES.claimDeleteFailed)).toBe(1);
    });
  },
  // Only the testkit injects faults and holds informers back.
  { tiers: ['testkit'] },
);
