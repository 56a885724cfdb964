/**
 * kube-controller-manager's expand controller (`pkg/controller/volume/expand`) as it treats the volumes a testkit
 * cluster has (`hostPath`, `local`, CSI): a bound claim whose storage request grows beyond its `status.capacity` is
 * looked at, no in-tree plugin expands its volume, so the controller leaves it to an external resizer and records a
 * Normal `ExternalExpanding` Event, `waiting for an external controller to expand this PVC` (source
 * `volume_expand`). It changes nothing else: the PV and the claim's status are the external resizer's to update.
 *
 * A claim is looked at when it appears and when its request or its status capacity grows, as the real controller's
 * informer handlers enqueue it.
 */
import type { ObjectStore } from '../store/store.js';
import { EventRecorder } from './events.js';
import { storageOf } from './match.js';
import { nsKey, splitKey, WorkQueue, type LoopOptions, type Stoppable } from './queue.js';
import { viewOpt, type PersistentVolumeClaim } from './types.js';

/** The component name the expand controller records its Events under. */
export const EXPAND_CONTROLLER = 'volume_expand';

const PVCS = 'persistentvolumeclaims';

const requestOf = (c: PersistentVolumeClaim | undefined): number => storageOf(c?.spec?.resources?.requests);
const capacityOf = (c: PersistentVolumeClaim | undefined): number => storageOf(c?.status?.capacity);

/** Starts the simulated expand controller; see the module comment. Also started by `startPvBinder`. */
export function startExpandController(store: ObjectStore, options: LoopOptions = {}): Stoppable {
  const recorder = new EventRecorder(store, EXPAND_CONTROLLER);
  const queue: WorkQueue = new WorkQueue((key) => {
    const [ns, name] = splitKey(key);
    const claim = viewOpt<PersistentVolumeClaim>(store.peekObject(PVCS, ns, name));
    if (claim === undefined || claim.metadata.deletionTimestamp !== undefined) return;
    const volumeName = claim.spec?.volumeName ?? '';
    if (volumeName === '' || claim.status?.phase !== 'Bound') return;
    if (requestOf(claim) <= capacityOf(claim)) return;
    if (store.peekObject('persistentvolumes', undefined, volumeName) === undefined) return;
    recorder.event(claim, 'Normal', 'ExternalExpanding', 'waiting for an external controller to expand this PVC');
  }, options);
  const unsubscribe = store.subscribe((c) => {
    if (c.resource !== PVCS || c.type === 'DELETED') return;
    const now = viewOpt<PersistentVolumeClaim>(c.object);
    const before = viewOpt<PersistentVolumeClaim>(c.previous);
    if (before === undefined || requestOf(now) > requestOf(before) || capacityOf(now) > capacityOf(before))
      queue.add(nsKey(c.object.metadata.namespace, c.object.metadata.name));
  });
  return {
    async stop() {
      unsubscribe();
      await queue.stop();
    },
  };
}
