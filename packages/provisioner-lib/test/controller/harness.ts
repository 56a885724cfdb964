import { startApiServer, type Testkit } from '@kprov/testkit';
import {
  CoreV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
  type V1StorageClass,
} from '@kubernetes/client-node';
import { ProvisionController } from '../../src/controller/controller.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { settle, WAIT } from '../support/cluster.js';
import { started } from '../support/scene.js';
import { RecordingSink } from './recording-sink.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

/** Seeds the testkit's store directly, keeping the uid and status the Go fixtures give. */
export function seed(
  kit: Testkit,
  objects: {
    classes?: V1StorageClass[];
    claims?: V1PersistentVolumeClaim[];
    /** Volumes, or a function of the seeded claims (which carry their server-assigned uids by then). */
    volumes?: V1PersistentVolume[] | ((claims: V1PersistentVolumeClaim[]) => V1PersistentVolume[]);
    deleting?: string[];
  },
): void {
  for (const c of objects.classes ?? []) kit.store.create('storage.k8s.io/storageclasses', c as unknown as Obj);
  for (const c of objects.claims ?? []) {
    const created = kit.store.create('persistentvolumeclaims', c as unknown as Obj);
    // The server assigns uids; the fixture takes the real one so expectations (PV names, keys) follow it.
    if (c.metadata !== undefined) {
      c.metadata.uid = created.metadata.uid;
      c.metadata.resourceVersion = created.metadata.resourceVersion;
    }
  }
  const volumes =
    typeof objects.volumes === 'function' ? objects.volumes(objects.claims ?? []) : (objects.volumes ?? []);
  for (const v of volumes) {
    const created = kit.store.create('persistentvolumes', v as unknown as Obj);
    const name = created.metadata.name ?? '';
    if (v.status?.phase !== undefined) {
      kit.store.modify(
        'persistentvolumes',
        undefined,
        name,
        (o) => {
          o.status = { ...(o.status as object), phase: v.status?.phase };
        },
        { subresource: 'status' },
      );
    }
    if (objects.deleting?.includes(name) === true) {
      if ((created.metadata.finalizers ?? []).length === 0) {
        kit.store.modify('persistentvolumes', undefined, name, (o) => {
          o.metadata.finalizers = ['kubernetes.io/pv-protection'];
        });
      }
      kit.store.delete('persistentvolumes', undefined, name);
    }
  }
}

/**
 * The Go harness' controller: fast PV save retries, leader election on. Its resync is long (below) and its Lease has
 * the default timings: no case is about leadership, and a renew deadline of the Go harness' 100 ms is missed on a
 * busy machine, which ends the run in the middle of a case.
 */
export interface Harness {
  kit: Testkit;
  controller: ProvisionController;
  metrics: RecordingSink;
  core: CoreV1Api;
  stop(): Promise<void>;
  /** Waits until the controller has had nothing to do for a few consecutive checks. */
  settle(): Promise<void>;
  volumes(): V1PersistentVolume[];
  claims(): V1PersistentVolumeClaim[];
}

export async function startHarness(
  provisioner: Provisioner,
  objects: Parameters<typeof seed>[1],
  options: Partial<ProvisionControllerOptions> & { provisionerName?: string } = {},
  setupKit: (kit: Testkit) => void = () => undefined,
  setupController: (controller: ProvisionController) => void = () => undefined,
): Promise<Harness> {
  const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  seed(kit, objects);
  setupKit(kit);
  const metrics = new RecordingSink();
  const controller = new ProvisionController({
    kubeConfig: kit.kubeConfig,
    provisionerName: options.provisionerName ?? 'foo.bar/baz',
    provisioner,
    // The Go harness resyncs every 100 ms; a long period keeps each case to the attempts it is about.
    resyncPeriodMs: 60_000,
    ...(options.createProvisionedPVLimiter === undefined ? { createProvisionedPVIntervalMs: 10 } : {}),
    leaderElectionNamespace: 'default',
    metrics,
    ...options,
  });
  setupController(controller);
  const abort = new AbortController();
  const running = controller.run(abort.signal);
  running.catch(() => undefined);
  await started(controller, running);
  return {
    kit,
    controller,
    metrics,
    core: kit.kubeConfig.makeApiClient(CoreV1Api),
    settle: () => settle(controller, { timeoutMs: WAIT.timeout }),
    volumes: () => kit.store.list('persistentvolumes') as unknown as V1PersistentVolume[],
    claims: () => kit.store.list('persistentvolumeclaims') as unknown as V1PersistentVolumeClaim[],
    async stop() {
      abort.abort();
      await running.catch(() => undefined);
      await kit.stop();
    },
  };
}
