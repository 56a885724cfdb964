/**
 * API errors on the testkit tier, which injects them (the real tier cannot): a PV whose creation failed is created
 * at a later pass, a PV whose deletion failed is cleaned again and deleted at a later pass, and a PV that is gone by
 * the time it is deleted is no error.
 */
import { writeFileSync, readdirSync } from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { volumeName } from '../src/discovery/volume-name.js';
import {
  bind,
  classEntry,
  HOST_DIR,
  metricValue,
  startEnv,
  storageClass,
  volumeEvents,
  waitReady,
  waitVolumes,
  WAIT,
  type Env,
} from './helpers.js';

const NODE = 'node-1';
const REQUESTS = 'local_volume_provisioner_apiserver_requests_total';
const FAILED = 'local_volume_provisioner_apiserver_requests_failed_total';

/** Waits until PV `name` exists again with another UID than `uid`. */
async function waitRecreated(e: Env, name: string, uid: string | undefined): Promise<void> {
  await vi.waitFor(async () => {
    const pv = await e.read.volume(name);
    if (pv === undefined || pv.metadata?.uid === uid) throw new Error(`PV ${name} not recreated yet`);
  }, WAIT);
}

describeTiers(
  'API errors',
  () => {
    it('creates a PV whose creation failed at a later pass, and counts the failure', async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('sc1') });
      e.mounts.mount(`${e.onNode(NODE, HOST_DIR)}/disk1`);
      e.cluster.testkit!.faults.add({
        verb: 'create',
        resource: 'persistentvolumes',
        action: { type: 'error', code: 500 },
        count: 1,
      });
      const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
      await waitVolumes(e, [volumeName('disk1', NODE, 'sc1')]);
      await waitReady(instance);
      const text = await e.metrics(instance);
      expect(metricValue(text, `${REQUESTS}{method="create"}`)).toBe(2);
      expect(metricValue(text, `${FAILED}{method="create"}`)).toBe(1);
    });

    it('keeps a PV whose deletion failed, reports it, then cleans it again and deletes it', async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('sc1') });
      const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
      e.mounts.mount(disk);
      const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
      const name = volumeName('disk1', NODE, 'sc1');
      const first = (await waitVolumes(e, [name])).get(name)!;
      await bind(e, 'c1', 'sc1', name);
      writeFileSync(`${disk}/data`, 'x');
      e.cluster.testkit!.faults.add({
        verb: 'delete',
        resource: 'persistentvolumes',
        action: { type: 'error', code: 500 },
        count: 1,
      });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'c1', namespace: 'default' });
      await waitRecreated(e, name, first.metadata?.uid);
      const [event] = await volumeEvents(e, name, 'VolumeFailedDelete');
      expect(event).toMatchObject({ type: 'Warning' });
      expect(event?.message).toContain(`Error cleaning PV "${name}": failed to delete PV ${name}`);
      expect(readdirSync(disk)).toEqual([]);
      const text = await e.metrics(instance);
      expect(metricValue(text, `${REQUESTS}{method="delete"}`)).toBe(2);
      expect(metricValue(text, `${FAILED}{method="delete"}`)).toBe(1);
      expect(instance.provisioner.cleanupStats()).toMatchObject({ running: 0, succeeded: 2 });
    });

    it('takes a PV deleted by someone else meanwhile as deleted: no error, published again', async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('sc1') });
      const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
      e.mounts.mount(disk);
      const instance = await e.start(NODE, { storageClassMap: { sc1: classEntry(e, NODE) } });
      const name = volumeName('disk1', NODE, 'sc1');
      const first = (await waitVolumes(e, [name])).get(name)!;
      await bind(e, 'c1', 'sc1', name);
      // The provisioner's DELETE is held; an admin's, sent meanwhile, goes first.
      const faults = e.cluster.testkit!.faults;
      faults.add({ verb: 'delete', resource: 'persistentvolumes', action: { type: 'latency', ms: 1000 }, count: 1 });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'c1', namespace: 'default' });
      await vi.waitFor(() => expect(faults.hits()).toEqual([]), WAIT);
      await e.core.deletePersistentVolume({ name });
      await waitRecreated(e, name, first.metadata?.uid);
      await vi.waitFor(async () => {
        const text = await e.metrics(instance);
        expect(metricValue(text, `${REQUESTS}{method="delete"}`)).toBe(1);
        expect(metricValue(text, `${REQUESTS}{method="create"}`)).toBe(2);
        // The request failed (404), as upstream counts it; the deletion did not.
        expect(metricValue(text, `${FAILED}{method="delete"}`)).toBe(1);
      }, WAIT);
      expect(await volumeEvents(e, name, 'VolumeFailedDelete')).toEqual([]);
      expect(instance.provisioner.cleanupStats()).toMatchObject({ running: 0, failed: 0 });
    });
  },
  { tiers: ['testkit'] },
);
