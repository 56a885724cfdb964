/**
 * Simulated control loops over an {@link ObjectStore}: what kube-controller-manager (PV controller, PVC/PV
 * protection, Job controller, garbage collector), kube-scheduler and the kubelet do for storage provisioning. Each is started on its own and returns
 * something with `stop()`.
 */
export type { ObjectStore } from '../store/store.js';
export * from './annotations.js';
export { startPvBinder, type PvBinderOptions } from './binder.js';
export {
  startKubeletLoop,
  startStoreKubelet,
  type KubeletEvent,
  type KubeletHandle,
  type KubeletLoop,
  type KubeletLoopOptions,
  type KubeletNode,
  type PodRunOptions,
  type ReadLogOptions,
  type StoreKubeletOptions,
} from './kubelet/kubelet.js';
export { storeCluster, type ClusterListener, type KubeletCluster, type KubeletResource } from './kubelet/cluster.js';
export { goArch, nodeObject, registerNode, setNodeReady, type NodeOptions } from './nodes.js';
export { startProtection, type ProtectionOptions } from './protection.js';
export { EXPAND_CONTROLLER, startExpandController } from './expand.js';
export { startGarbageCollector } from './garbage-collector.js';
export {
  JOB_CONTROLLER,
  JOB_TRACKING_FINALIZER,
  startJobController,
  type JobControllerOptions,
} from './job-controller.js';
export { RESYNC_KEY, WorkQueue, type LoopOptions, type Stoppable } from './queue.js';
export { startScheduler, type SchedulerOptions } from './scheduler.js';
