import type { KubeConfig, V1Lease, V1LeaseSpec, V1ObjectReference } from '@kubernetes/client-node';
// By path: client-node's entry point loads every generated API and model.
import { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
import { withSignal } from '../client/agent.js';
import { isNotFound } from '../client/api-errors.js';
import { makeLeaseClient, type LeaseApi, type LeaseClient } from './lease-client.js';

/**
 * The election state kept in the lock (client-go's `LeaderElectionRecord`), mapped to and from a Lease spec.
 * Times are wall-clock stamps written by the holder; they are informational and never compared with the local clock.
 */
export interface LeaderElectionRecord {
  /** Who holds the lease; empty when nobody does (released). */
  holderIdentity: string;
  /** The holder's lease duration, whole seconds. */
  leaseDurationSeconds: number;
  /** When the current holder acquired the lease. */
  acquireTime?: Date | undefined;
  /** When the current holder last renewed the lease. */
  renewTime?: Date | undefined;
  /** How many times the lease changed hands. */
  leaseTransitions: number;
}

/** What {@link ResourceLock.get} read: the record and its raw form, which is what change detection compares. */
export interface ObservedLock {
  record: LeaderElectionRecord;
  /** The record serialized exactly as the server sent it (JSON of the spec fields, times as received). */
  raw: string;
}

/** Messages a lock records as events, after the identity: `"<identity> became leader"`. */
export type LeaderElectionEventMessage = 'became leader' | 'stopped leading';

/**
 * The lock a `LeaderElector` competes for (client-go's `resourcelock.Interface`). Calls may be aborted by `signal`.
 * Errors are the client's (for `LeaseLock`, client-node's `ApiException`).
 */
export interface ResourceLock {
  /** The candidate's identity written as holder. */
  readonly identity: string;
  /** Reads the record and caches the object for {@link ResourceLock.update}; `undefined` when it does not exist. */
  get(signal?: AbortSignal): Promise<ObservedLock | undefined>;
  /** Creates the object holding `record`; fails (409) when it already exists. */
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  /** Writes `record` over the cached object, with optimistic concurrency (409 Conflict when it changed since). */
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  /** Records a leader election event about this candidate. Never throws. */
  recordEvent(message: LeaderElectionEventMessage): void;
  /** `namespace/name`, for logs. */
  describe(): string;
}

/**
 * Receives leader election events: reason `LeaderElection`, type Normal, message `"<identity> became leader"` or
 * `"<identity> stopped leading"`, about `subject` (the Lease). Errors and rejections are swallowed: events are best
 * effort.
 */
export type LeaderElectionEventRecorder = (
  reason: string,
  message: string,
  subject: V1ObjectReference,
) => void | Promise<void>;

/** Options of {@link LeaseLock}. Give exactly one of `kubeConfig` and `client`. */
export interface LeaseLockOptions {
  /**
   * KubeConfig to build the lock's own client from (`makeLeaseClient`: a connection pool used by nothing else, so a
   * busy main client cannot delay renewals). Its agent is closed by {@link LeaseLock.close}.
   */
  kubeConfig?: KubeConfig | undefined;
  /**
   * A client to use instead, e.g. `makeLeaseClient(kc).api` or a `CoordinationV1Api`; it should be dedicated to
   * leader election too (see `makeLeaseClient`).
   */
  client?: LeaseApi | undefined;
  /** Namespace of the Lease. */
  namespace: string;
  /** Name of the Lease (for a provisioner, `leaseName(provisionerName)`). */
  name: string;
  /** This candidate's identity, e.g. `defaultIdentity()`. */
  identity: string;
  /** Labels merged into the Lease's labels on every create and update. Default none. */
  labels?: Readonly<Record<string, string>>;
  /** Where to send `LeaderElection` events. Default: none are recorded. */
  recordEvent?: LeaderElectionEventRecorder;
}

/** The reason of leader election events, as client-go records them. */
export const LEADER_ELECTION_EVENT_REASON = 'LeaderElection';

/** Time fields arrive as strings at run time although client-node types them as `Date`. */
function rawTime(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return new V1MicroTime(value.getTime()).toISOString();
  return '';
}

function parseTime(value: unknown): V1MicroTime | undefined {
  let ms: number;
  if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string' && value !== '') ms = Date.parse(value);
  else return undefined;
  return Number.isNaN(ms) ? undefined : new V1MicroTime(ms);
}

/** Lease spec → record (client-go's `LeaseSpecToLeaderElectionRecord`). Absent fields read as empty/zero. */
export function leaseSpecToRecord(spec: V1LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: parseTime(spec?.acquireTime),
    renewTime: parseTime(spec?.renewTime),
    leaseTransitions: spec?.leaseTransitions ?? 0,
  };
}

/**
 * The raw form of a spec's election fields: a fixed-order JSON with times exactly as received, so any change the
 * holder makes (even below a millisecond) shows.
 */
export function rawLeaseRecord(spec: V1LeaseSpec | undefined): string {
  return JSON.stringify({
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: rawTime(spec?.acquireTime),
    renewTime: rawTime(spec?.renewTime),
    leaseTransitions: spec?.leaseTransitions ?? 0,
    preferredHolder: spec?.preferredHolder ?? '',
    strategy: spec?.strategy ?? '',
  });
}

function microTime(d: Date | undefined): V1MicroTime | undefined {
  if (d === undefined) return undefined;
  return d instanceof V1MicroTime ? d : new V1MicroTime(d.getTime());
}

/**
 * Record → Lease spec (client-go's `LeaderElectionRecordToLeaseSpec`). Times become `V1MicroTime`, which serializes
 * with the six fractional digits the API server requires.
 */
export function recordToLeaseSpec(record: LeaderElectionRecord): V1LeaseSpec {
  const spec: V1LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  const acquireTime = microTime(record.acquireTime);
  if (acquireTime !== undefined) spec.acquireTime = acquireTime;
  const renewTime = microTime(record.renewTime);
  if (renewTime !== undefined) spec.renewTime = renewTime;
  return spec;
}

/**
 * A {@link ResourceLock} on a coordination.k8s.io/v1 Lease (client-go's `LeaseLock`). `get` caches the Lease and
 * `update` writes over the cached object, so its resourceVersion makes the write conditional: a concurrent writer
 * gets 409 Conflict.
 */
export class LeaseLock implements ResourceLock {
  /** This candidate's identity, written as holder. */
  readonly identity: string;
  private readonly options: LeaseLockOptions;
  private readonly client: LeaseApi;
  private readonly owned: LeaseClient | undefined = undefined;
  private lease: V1Lease | undefined;

  /**
   * @param options - see {@link LeaseLockOptions}.
   * @throws Error when the namespace, name or identity is empty, or not exactly one of `kubeConfig` and `client` is
   *   given; see `makeLeaseClient` for errors building the client.
   */
  constructor(options: LeaseLockOptions) {
    if (options.namespace === '' || options.name === '') throw new Error('LeaseLock needs a namespace and a name');
    if (options.identity.trim() === '') throw new Error('LeaseLock needs a non-empty identity');
    if ((options.kubeConfig === undefined) === (options.client === undefined)) {
      throw new Error('LeaseLock needs exactly one of kubeConfig and client');
    }
    this.options = options;
    this.identity = options.identity;
    if (options.client !== undefined) {
      this.client = options.client;
    } else if (options.kubeConfig !== undefined) {
      this.owned = makeLeaseClient(options.kubeConfig);
      this.client = this.owned.api;
    } else {
      throw new Error('LeaseLock needs exactly one of kubeConfig and client');
    }
  }

  /** Closes the connection pool the lock built from `kubeConfig` (nothing when a client was given). */
  async close(): Promise<void> {
    await this.owned?.close();
  }

  /** Reads the Lease; `undefined` when it does not exist. */
  async get(signal?: AbortSignal): Promise<ObservedLock | undefined> {
    const client = this.client;
    const { name, namespace } = this.options;
    let lease: V1Lease;
    try {
      lease = await client.readNamespacedLease(
        { name, namespace },
        signal === undefined ? undefined : withSignal(signal),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    this.lease = lease;
    return { record: leaseSpecToRecord(lease.spec), raw: rawLeaseRecord(lease.spec) };
  }

  /** Creates the Lease with `record` and the configured labels. */
  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const client = this.client;
    const { name, namespace, labels } = this.options;
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace, ...(labels === undefined ? {} : { labels: { ...labels } }) },
      spec: recordToLeaseSpec(record),
    };
    this.lease = await client.createNamespacedLease(
      { namespace, body },
      signal === undefined ? undefined : withSignal(signal),
    );
  }

  /**
   * Replaces the spec of the cached Lease with `record` (labels merged in) and writes it back.
   * @throws Error when neither `get` nor `create` has run yet; the client's error (409 on a stale resourceVersion).
   */
  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const client = this.client;
    const { name, namespace, labels } = this.options;
    const cached = this.lease;
    if (cached === undefined) throw new Error('LeaseLock.update: lease not initialized, call get or create first');
    const metadata = { ...cached.metadata };
    if (labels !== undefined) metadata.labels = { ...metadata.labels, ...labels };
    const body: V1Lease = { ...cached, metadata, spec: recordToLeaseSpec(record) };
    this.lease = await client.replaceNamespacedLease(
      { name, namespace, body },
      signal === undefined ? undefined : withSignal(signal),
    );
  }

  /** Sends `"<identity> <message>"` with reason `LeaderElection` to the configured recorder, if any. */
  recordEvent(message: LeaderElectionEventMessage): void {
    const recorder = this.options.recordEvent;
    if (recorder === undefined) return;
    const meta = this.lease?.metadata;
    const subject: V1ObjectReference = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: this.options.namespace,
      name: this.options.name,
      ...(meta?.uid === undefined ? {} : { uid: meta.uid }),
      ...(meta?.resourceVersion === undefined ? {} : { resourceVersion: meta.resourceVersion }),
    };
    try {
      const result = recorder(LEADER_ELECTION_EVENT_REASON, `${this.identity} ${message}`, subject);
      if (result instanceof Promise) result.catch(() => undefined);
    } catch {
      // best effort, as event recording is in client-go
    }
  }

  /** `namespace/name`. */
  describe(): string {
    return `${this.options.namespace}/${this.options.name}`;
  }
}
