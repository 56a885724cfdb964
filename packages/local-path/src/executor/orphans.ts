/**
 * What both orphan reconcilers share. A setup that a crash interrupted left a record (the setup helper pod, or node
 * mode's pending record); the API says what became of it: its PV exists (the volume was saved, the record goes), its
 * claim still exists with the same uid (its provisioning goes on, the record stays), or neither (the directory is
 * orphaned and torn down through the provisioner, with the checks of a PV deletion).
 *
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  describeError,
  isNotFound,
  makeCoreV1Calls,
  realClock,
  silentLogger,
  withSignal,
  type Clock,
  type CoreV1Calls,
  type Logger,
} from '@kprov/provisioner-lib';
import { TeardownRefusedError, type ClaimIdentity } from '../volume/teardown-guard.js';
import type { OrphanTeardown, VolumeRecord } from './executor.js';
import { runPasses } from './passes.js';

/** What became of an interrupted setup: its PV was saved, its claim still waits for it, or both are gone. */
export type OrphanState = 'saved' | 'pending' | 'orphaned';

/** Reads what became of the setup of `pvName` for `claim` (see {@link OrphanState}). */
export async function orphanState(
  core: CoreV1Calls,
  pvName: string,
  claim: ClaimIdentity | undefined,
  signal: AbortSignal,
): Promise<OrphanState> {
  if (await found(() => core.readPersistentVolume({ name: pvName }, withSignal(signal)))) return 'saved';
  const { namespace = '', name = '', uid } = claim ?? {};
  if (namespace === '' || name === '') return 'orphaned';
  let claimUid: string | undefined;
  const exists = await found(async () => {
    claimUid = (await core.readNamespacedPersistentVolumeClaim({ namespace, name }, withSignal(signal))).metadata?.uid;
  });
  // The claim of the same name, made again since, is another claim.
  return exists && (uid === undefined || claimUid === uid) ? 'pending' : 'orphaned';
}

/** Whether `read` finds its object: false for NotFound, other errors thrown. */
async function found(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Tears orphaned directories down through the provisioner. A refused teardown is logged as an error once per record
 * (the next passes find it again), a failed one as a warning each time; both keep the record for the next pass.
 */
export class OrphanTeardowns {
  /** Records whose refused teardown was reported already. */
  private readonly reported = new Set<string>();

  constructor(private readonly provisioner: OrphanTeardown) {}

  /** Tears the record's directory down; resolves whether it was (false: refused or failed, logged on `logger`). */
  async tearDown(record: VolumeRecord, key: string, logger: Logger, signal: AbortSignal): Promise<boolean> {
    try {
      await this.provisioner.teardownOrphan(record, signal);
      return true;
    } catch (err) {
      if (signal.aborted) throw err;
      const message = `The directory of an interrupted setup was not removed: ${describeError(err)}`;
      if (err instanceof TeardownRefusedError) {
        if (!this.reported.has(key)) logger.error({}, message);
        this.reported.add(key);
      } else logger.warn({}, message);
      return false;
    }
  }
}

/** What every orphan reconciler takes. */
export interface OrphanReconcilerOptions {
  readonly kubeConfig: KubeConfig;
  /** The provisioner, whose executor made the records and whose teardown removes orphans. */
  readonly provisioner: OrphanTeardown;
  /** Where failed passes and refused or failed teardowns are logged (as `component: reconciler`). Default: nowhere. */
  readonly logger?: Logger | undefined;
  /** Time source of the passes (and of the reconciler's waits). Default the real clock. */
  readonly clock?: Clock | undefined;
}

/** An orphan reconciler: one pass ({@link OrphanReconciler.reconcile}) at once, then one every interval. */
export abstract class OrphanReconciler<Report> {
  protected readonly core: CoreV1Calls;
  protected readonly logger: Logger;
  protected readonly clock: Clock;
  /** Tears orphans down, reporting a refusal once per record. */
  protected readonly teardowns: OrphanTeardowns;

  constructor(
    options: OrphanReconcilerOptions,
    /** What a failed pass logs. */
    private readonly failure: string,
  ) {
    this.core = makeCoreV1Calls(options.kubeConfig);
    this.logger = (options.logger ?? silentLogger).child({ component: 'reconciler' });
    this.clock = options.clock ?? realClock;
    this.teardowns = new OrphanTeardowns(options.provisioner);
  }

  /** Runs a pass at once, then one every `intervalMs`, until `signal` aborts. Errors of a pass are logged. */
  run(intervalMs: number, signal: AbortSignal): Promise<void> {
    return runPasses((s) => this.reconcile(s), intervalMs, signal, this.logger, this.failure, this.clock);
  }

  /** One pass over the records. */
  abstract reconcile(signal: AbortSignal): Promise<Report>;
}
