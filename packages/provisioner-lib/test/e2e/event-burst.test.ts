/**
 * A burst of claims at threadiness 16, on both tiers: every Event the controller records reaches the API server,
 * none is dropped by the recorder's 1,000-event queue, and the drop counter says so. (Throughput figures are the
 * bench's, not this file's: see bench/README.md.)
 *
 * Before the recorder's writes in flight were matched to the threadiness, about 480 of the 2,000 Events were dropped
 * on both tiers: 8 Event writes shared the server with 16 PV writes, while each PV write comes with two Events.
 *
 * The real tier runs kube-apiserver without kube-controller-manager: binding a thousand claims is its work, not
 * the provisioner's, and would only load the server in the background. The claims carry the storage-provisioner
 * annotation its PV controller (or the testkit's binder, off here as well) would add.
 */
import type { Cluster } from '@kprov/testkit';
import { describeTiers, WAIT } from '@kprov/testkit/vitest';
import { CoreV1Api, StorageV1Api, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { expect, it, vi } from 'vitest';
import { ProvisionController } from '../../src/controller/controller.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { EVENT_RECORDER_DROPPED_EVENTS } from '../../src/events/recorder.js';
import { RecordingSink } from '../controller/recording-sink.js';
import { captureLogger } from '../events/capture-logger.js';
import { volumeTemplate } from '../support/scene.js';

const PROVISIONER = 'example.com/burst';
const CLASS = 'burst';
const CLAIMS = 1000;
const THREADINESS = 16;
/** Claim creates the test keeps in flight. */
const IN_FLIGHT = 32;

/** Runs `fn` over `items` with at most {@link IN_FLIGHT} calls at once. */
async function inParallel<T>(items: readonly T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

const claim = (name: string): V1PersistentVolumeClaim => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, annotations: { 'volume.kubernetes.io/storage-provisioner': PROVISIONER } },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: CLASS },
});

describeTiers(
  'Events of a burst of claims',
  (tier) => {
    it(`records all ${2 * CLAIMS} Events of ${CLAIMS} claims provisioned at threadiness ${THREADINESS}, dropping none`, async () => {
      const cluster: Cluster = await tier.start({
        nodes: [],
        testkit: { binder: false, scheduler: false, kubelet: false },
      });
      const core = cluster.kubeConfig.makeApiClient(CoreV1Api);
      const names = Array.from({ length: CLAIMS }, (_, i) => `burst-${i}`);
      if (tier.name === 'real') tier.defer(() => removeAll(core));
      await cluster.kubeConfig
        .makeApiClient(StorageV1Api)
        .createStorageClass({ body: { metadata: { name: CLASS }, provisioner: PROVISIONER, reclaimPolicy: 'Delete' } });
      // Every claim is there when the controller starts: its first list hands all of them to the workers at once.
      await inParallel(names, (name) =>
        core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim(name) }),
      );

      const provisioner: Provisioner = {
        provision: async ({ pvName, pvc, storageClass }) => ({ volume: volumeTemplate(pvName, pvc, storageClass) }),
        delete: async () => undefined,
      };
      const metrics = new RecordingSink();
      const logger = captureLogger();
      const controller = new ProvisionController({
        kubeConfig: cluster.kubeConfig,
        provisionerName: PROVISIONER,
        provisioner,
        threadiness: THREADINESS,
        leaderElection: false,
        metrics,
        logger,
      });
      const provisioned = new Set<string>();
      controller.on('provisioned', (c) => provisioned.add(c.metadata?.uid ?? ''));
      const stop = new AbortController();
      const running = controller.run(stop.signal);
      try {
        await vi.waitFor(() => expect(provisioned.size).toBe(CLAIMS), WAIT);
      } finally {
        stop.abort();
        // run resolves once the recorder has written (or given up) every Event it accepted.
        await running;
      }

      expect(logger.lines.filter((l) => l.message.includes('event dropped')).length).toBe(0);
      const dropped = [...(metrics.series.get(EVENT_RECORDER_DROPPED_EVENTS) ?? [])].map(([labels, n]) => [
        (JSON.parse(labels) as { reason: string }).reason,
        n,
      ]);
      expect(Object.fromEntries(dropped)).toEqual({ queue_full: 0, shut_down: 0, retry_limit: 0, rejected: 0 });
      const events = (await core.listNamespacedEvent({ namespace: 'default' })).items.filter((e) =>
        e.source?.component?.startsWith(`${PROVISIONER}_`),
      );
      const byReason = new Map<string, number>();
      for (const e of events) byReason.set(e.reason ?? '', (byReason.get(e.reason ?? '') ?? 0) + 1);
      expect(Object.fromEntries(byReason)).toEqual({ Provisioning: CLAIMS, ProvisioningSucceeded: CLAIMS });
    }, 120_000);
  },
  {
    controlPlane: {
      controllerManager: false,
      scheduler: false,
      // No protection finalizers on claims and volumes (kube-controller-manager, which takes them off, is not
      // running), so that the clean-up is three deletecollection requests.
      extraArgs: { apiServer: ['--disable-admission-plugins=StorageObjectInUseProtection'] },
    },
  },
);

/** Removes the claims, their volumes and the Events in bulk (the tier's own clean-up goes one object at a time). */
async function removeAll(core: CoreV1Api): Promise<void> {
  await core.deleteCollectionNamespacedPersistentVolumeClaim({ namespace: 'default' });
  await core.deleteCollectionPersistentVolume();
  await core.deleteCollectionNamespacedEvent({ namespace: 'default' });
}
