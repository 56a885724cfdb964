/**
 * @packageDocumentation
 * An in-process Kubernetes API server that real clients (client-node, kubectl) talk to over HTTP, with the
 * control loops a storage provisioner relies on (PV binder, scheduler, kubelet) and fault injection.
 */
export { startApiServer, type NodeSpec, type Testkit, type TestkitOptions } from './testkit.js';
export { kubeConfigFor, kubeconfigYaml, writeKubeconfig } from './kubeconfig.js';
export { ApiServer, type ApiServerOptions, type PodLogSource } from './server/server.js';
export { FaultInjector, type FaultAction, type FaultRule, type FaultRequest } from './server/faults.js';
export {
  ObjectStore,
  DEFAULT_NAMESPACES,
  type StoreOptions,
  type ResourceRef,
  type WriteOptions,
  type Preconditions,
  type DeleteOptions,
  type PropagationPolicy,
  type DeleteResult,
  type ChangeListener,
  type Unsubscribe,
} from './store/store.js';
export { ChangeHistory, type Change, type ChangeType } from './store/history.js';
export { RESOURCES, findResource, resourceKey, type ResourceType, type Verb } from './api/resources.js';
export { StatusError, type Status, type StatusCause, type StatusDetails, type StatusReason } from './api/status.js';
export type { KubeObject, ObjectMeta, OwnerReference } from './api/objects.js';
export {
  toTable,
  humanDuration,
  type Table,
  type TableRow,
  type TableColumnDefinition,
  type ToTableOptions,
} from './server/table.js';
export { formatTable, type FormatTableOptions, type TableLike } from './format/table-text.js';
export { kubectlGet } from './format/kubectl-get.js';
export {
  waitFor,
  startNodeProcess,
  startServeProcess,
  stopProcess,
  type ServeProcess,
  type ServeProcessOptions,
  type StartNodeProcessOptions,
  type WaitForOptions,
} from './process/index.js';
export {
  startControlPlane,
  type ControlPlane,
  type ControlPlaneOptions,
  type ExtraArgs,
} from './control-plane/control-plane.js';
export type { Identity } from './control-plane/pki.js';
export { ASSETS_ENV, assetsDir, type Binary, type OptionalBinary } from './control-plane/assets.js';
export { startTestkitCluster, nodePathOn, type Cluster, type ClusterOptions, type TierName } from './tiers/cluster.js';
export { RealTier, SIMULATED_NODES, type NodeSource, type RealTierOptions, type TestNodes } from './tiers/real.js';
export { NodeTier, type NodeTierOptions } from './tiers/node.js';
export { ExistingClusterTier, CREATED_FOR_TEST_LABEL, type ExistingClusterTierOptions } from './tiers/existing.js';
export { installCRDs, type CRDInstallOptions } from './control-plane/crds.js';
export { userTools, type UserTools, type UserToolsOptions } from './tiers/user-tools.js';
export { terminatePod, type TerminatedContainer, type TerminatePodOptions } from './tiers/terminate-pod.js';
export {
  availableTiers,
  existingClusterLine,
  nodeTierSkippedLine,
  realTierSkippedLine,
  useExistingCluster,
  ENVTEST_USE_EXISTING_CLUSTER_ENV,
  TIERS_ENV,
  USE_EXISTING_CLUSTER_ENV,
} from './tiers/tiers.js';
export {
  ObjectReader,
  recordWatch,
  type EventFilter,
  type RecordedEvent,
  type WatchRecorder,
} from './tiers/objects.js';
export { startKubelet, type Kubelet, type KubeletNodeOptions, type KubeletOptions } from './hollow-node/start.js';
export type { KubeletEvent, KubeletHandle, KubeletNode, PodRunOptions, ReadLogOptions } from './sim/kubelet/kubelet.js';
export type { Taint } from './sim/types.js';
export type { JobControllerOptions } from './sim/job-controller.js';
export { demoMain, runDemo, type DemoContext, type DemoOptions } from './demo/runner.js';
export { findHelm } from './helm/find.js';
export { helmTemplate, type HelmTemplateOptions } from './helm/template.js';
export {
  OBJECT_NAME,
  loadManifestFiles,
  manifestValidator,
  parseManifests,
  rulesAllow,
  type Manifest,
  type ManifestFiles,
  type ManifestModel,
  type PolicyRuleLike,
} from './manifests/manifests.js';
export { startNode, type NodeOptions, type RealNode } from './node/node.js';
export { nodeHostMissing, NODE_PACKAGES } from './node/host.js';
export { busyboxImage, BUSYBOX_IMAGE } from './node/images.js';
export { imageArchiveProblem, imageArchiveRefs } from './node/image-archive.js';
