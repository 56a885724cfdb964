import type { BatchV1Api, CoordinationV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import type { AgentClientOptions } from '../agent.js';
import { RestClient } from '../rest.js';
import { create, endpointCalls, list, read, remove, type Endpoint } from './endpoint.js';

const STORAGE_V1: Readonly<Record<keyof StorageV1Calls, Endpoint>> = {
  readStorageClass: read('/apis/storage.k8s.io/v1/storageclasses/{name}', 'V1StorageClass'),
  listStorageClass: list('/apis/storage.k8s.io/v1/storageclasses', 'V1StorageClass'),
};

const JOBS = '/apis/batch/v1/namespaces/{namespace}/jobs';
const BATCH_V1: Readonly<Record<keyof BatchV1Calls, Endpoint>> = {
  readNamespacedJob: read(`${JOBS}/{name}`, 'V1Job'),
  createNamespacedJob: create(JOBS, 'V1Job'),
  deleteNamespacedJob: remove(`${JOBS}/{name}`, 'V1Job'),
};

const COORDINATION_V1: Readonly<Record<keyof CoordinationV1Calls, Endpoint>> = {
  readNamespacedLease: read('/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}', 'V1Lease'),
};

/** The calls of client-node's `StorageV1Api` that {@link makeStorageV1Calls} sends through the library's client. */
export type StorageV1Calls = Pick<StorageV1Api, 'readStorageClass' | 'listStorageClass'>;
/** The calls of client-node's `BatchV1Api` that {@link makeBatchV1Calls} sends through the library's client. */
export type BatchV1Calls = Pick<BatchV1Api, 'readNamespacedJob' | 'createNamespacedJob' | 'deleteNamespacedJob'>;
/**
 * The calls of client-node's `CoordinationV1Api` that {@link makeCoordinationV1Calls} sends through the library's
 * client.
 */
export type CoordinationV1Calls = Pick<CoordinationV1Api, 'readNamespacedLease'>;

/**
 * Reading and listing StorageClasses with client-node's `StorageV1Api` signatures, sent as `makeCoreV1Calls` sends
 * its calls (answers in client-node's model shape). Options as `makeCoreV1Calls`'s.
 */
export function makeStorageV1Calls(kc: KubeConfig, options: AgentClientOptions = {}): StorageV1Calls {
  return endpointCalls<StorageV1Api, keyof StorageV1Calls>(new RestClient(kc, options), 'StorageV1Api', STORAGE_V1);
}

/**
 * Reading, creating and deleting Jobs with client-node's `BatchV1Api` signatures, sent as `makeCoreV1Calls` sends its
 * calls (answers as parsed JSON, timestamps the strings sent). Options as `makeCoreV1Calls`'s.
 */
export function makeBatchV1Calls(kc: KubeConfig, options: AgentClientOptions = {}): BatchV1Calls {
  return endpointCalls<BatchV1Api, keyof BatchV1Calls>(new RestClient(kc, options), 'BatchV1Api', BATCH_V1);
}

/**
 * Reading a Lease with client-node's `CoordinationV1Api` signature, sent as `makeCoreV1Calls` sends its calls (the
 * Lease in client-node's model shape; its `acquireTime` and `renewTime` strings, as client-node leaves them). Options
 * as `makeCoreV1Calls`'s.
 */
export function makeCoordinationV1Calls(kc: KubeConfig, options: AgentClientOptions = {}): CoordinationV1Calls {
  return endpointCalls<CoordinationV1Api, keyof CoordinationV1Calls>(
    new RestClient(kc, options),
    'CoordinationV1Api',
    COORDINATION_V1,
  );
}
