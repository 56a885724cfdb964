import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { AgentClientOptions } from '../agent.js';
import { RestClient } from '../rest.js';
import { create, endpointCalls, list, patch, read, readText, remove, replace, type Endpoint } from './endpoint.js';

const NODE = '/api/v1/nodes/{name}';
const VOLUME = '/api/v1/persistentvolumes/{name}';
const CLAIMS = '/api/v1/namespaces/{namespace}/persistentvolumeclaims';
const CONFIG_MAPS = '/api/v1/namespaces/{namespace}/configmaps';
const PODS = '/api/v1/namespaces/{namespace}/pods';

const CORE_V1: Readonly<Record<keyof CoreV1Calls, Endpoint>> = {
  readNode: read(NODE, 'V1Node'),
  replaceNode: replace(NODE, 'V1Node'),
  listNode: list('/api/v1/nodes', 'V1Node'),
  createPersistentVolume: create('/api/v1/persistentvolumes', 'V1PersistentVolume'),
  readPersistentVolume: read(VOLUME, 'V1PersistentVolume'),
  patchPersistentVolume: patch(VOLUME, 'V1PersistentVolume'),
  deletePersistentVolume: remove(VOLUME, 'V1PersistentVolume'),
  listPersistentVolume: list('/api/v1/persistentvolumes', 'V1PersistentVolume'),
  readNamespacedPersistentVolumeClaim: read(`${CLAIMS}/{name}`, 'V1PersistentVolumeClaim'),
  replaceNamespacedPersistentVolumeClaim: replace(`${CLAIMS}/{name}`, 'V1PersistentVolumeClaim'),
  patchNamespacedPersistentVolumeClaimStatus: patch(`${CLAIMS}/{name}/status`, 'V1PersistentVolumeClaim'),
  deleteNamespacedPersistentVolumeClaim: remove(`${CLAIMS}/{name}`, 'V1PersistentVolumeClaim'),
  listNamespacedPersistentVolumeClaim: list(CLAIMS, 'V1PersistentVolumeClaim'),
  readNamespacedConfigMap: read(`${CONFIG_MAPS}/{name}`, 'V1ConfigMap'),
  listNamespacedConfigMap: list(CONFIG_MAPS, 'V1ConfigMap'),
  createNamespacedPod: create(PODS, 'V1Pod'),
  readNamespacedPod: read(`${PODS}/{name}`, 'V1Pod'),
  deleteNamespacedPod: remove(`${PODS}/{name}`, 'V1Pod'),
  listNamespacedPod: list(PODS, 'V1Pod'),
  readNamespacedPodLog: readText(`${PODS}/{name}/log`),
};

/**
 * The calls of client-node's `CoreV1Api` that {@link makeCoreV1Calls} sends through the library's client: a
 * `CoreV1Api` (from `makeApiClient`) is one too.
 */
export type CoreV1Calls = Pick<
  CoreV1Api,
  | 'readNode'
  | 'replaceNode'
  | 'listNode'
  | 'createPersistentVolume'
  | 'readPersistentVolume'
  | 'patchPersistentVolume'
  | 'deletePersistentVolume'
  | 'listPersistentVolume'
  | 'readNamespacedPersistentVolumeClaim'
  | 'replaceNamespacedPersistentVolumeClaim'
  | 'patchNamespacedPersistentVolumeClaimStatus'
  | 'deleteNamespacedPersistentVolumeClaim'
  | 'listNamespacedPersistentVolumeClaim'
  | 'readNamespacedConfigMap'
  | 'listNamespacedConfigMap'
  | 'createNamespacedPod'
  | 'readNamespacedPod'
  | 'deleteNamespacedPod'
  | 'listNamespacedPod'
  | 'readNamespacedPodLog'
>;

/**
 * Storage provisioners' calls of client-node's `CoreV1Api` (Nodes; PersistentVolumes and claims; ConfigMaps; Pods
 * and their logs), with its signatures, sent by the library's JSON client (`RestClient`) instead of the generated
 * class. A binary that makes its calls this way does not load client-node's generated APIs, its serializer with every
 * model, its `KubeConfig` module or undici: about 15 to 20 MiB of a process's RSS.
 *
 * Each call sends what client-node's sends: the method and path, the path's parameters escaped, the other fields of
 * its parameter object as query parameters (`_continue` as `continue`; a field the method does not declare, which
 * client-node drops, is sent too), the body as JSON; a patch without a Content-Type option is a JSON patch, as
 * client-node sends it; the per-call options (`withSignal(signal)`, `setHeaderOptions('Content-Type',
 * PatchStrategy.MergePatch)`) apply as `RestClient.json` applies them, and options that would change anything else
 * reject the call before anything is sent. A missing path parameter or body rejects with client-node's
 * `RequiredError`, an answer other than 2xx with its `ApiException`.
 *
 * Answers: PersistentVolumes and claims in client-node's model shape (their timestamps `Date`s), as the library's
 * informers give them; Nodes, ConfigMaps and Pods as parsed JSON, their timestamps the strings sent; a list's `items`
 * always an array and its `metadata.continue` renamed `_continue`; a log as its text.
 *
 * @param kc - the KubeConfig; its current context at call time picks the server and credentials.
 * @param options - `agent` (default the library's shared keep-alive pool of `kc`), `userAgent` (default
 *   `DEFAULT_USER_AGENT`), `rateLimiter` and `onThrottled` (default those registered for `kc`), as for `makeApiClient`.
 */
export function makeCoreV1Calls(kc: KubeConfig, options: AgentClientOptions = {}): CoreV1Calls {
  return endpointCalls<CoreV1Api, keyof CoreV1Calls>(new RestClient(kc, options), 'CoreV1Api', CORE_V1);
}
