/**
 * The cleanup Jobs of this node's volumes on the API server: one Job per PV, looked up by name (upstream tracks them
 * with an informer), created, and deleted once it succeeded.
 *
 * @module
 */
import type { BatchV1Api, V1Job } from '@kubernetes/client-node';
import { isNotFound, withSignal } from '@kprov/provisioner-lib';
import { jobName } from './job.js';

/** Reads, creates and deletes the cleanup Jobs in one namespace. */
export class CleanupJobs {
  constructor(
    private readonly batch: Pick<BatchV1Api, 'readNamespacedJob' | 'createNamespacedJob' | 'deleteNamespacedJob'>,
    /** The Jobs' namespace (`MY_NAMESPACE`). */
    readonly namespace: string,
  ) {}

  /** The cleanup Job of `pvName`, or `undefined` when there is none. */
  async get(pvName: string, signal: AbortSignal): Promise<V1Job | undefined> {
    try {
      return await this.batch.readNamespacedJob(
        { name: jobName(pvName), namespace: this.namespace },
        withSignal(signal),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Whether a cleanup Job of `pvName` exists that has not succeeded (a lookup error counts as running). */
  async running(pvName: string, signal: AbortSignal): Promise<boolean> {
    try {
      const job = await this.get(pvName, signal);
      return job !== undefined && (job.status?.succeeded ?? 0) <= 0;
    } catch {
      return true;
    }
  }

  /** Creates `body`, a cleanup Job (`cleanupJob`). */
  async create(body: V1Job, signal: AbortSignal): Promise<void> {
    await this.batch.createNamespacedJob({ namespace: this.namespace, body }, withSignal(signal));
  }

  /** Deletes the cleanup Job of `pvName` in the foreground (its pods first); one already gone is no error. */
  async delete(pvName: string, signal: AbortSignal): Promise<void> {
    await this.batch
      .deleteNamespacedJob(
        { name: jobName(pvName), namespace: this.namespace, propagationPolicy: 'Foreground' },
        withSignal(signal),
      )
      .catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
  }
}
