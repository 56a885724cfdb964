/**
 * Shared pieces of the end-to-end and resilience tests: an in-memory storage backend with a recording provisioner,
 * a timeline that orders what the provisioners and controllers did, and a controller runner.
 */
import type { Cluster } from '@kprov/testkit';
import type { TierContext } from '@kprov/testkit/vitest';
import type { KubeConfig, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { ProvisionController } from '../../src/controller/controller.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { apiOf, VolumeHistory, type Api } from './cluster.js';

/** One thing that happened, in a global order (`seq`), by whom. */
export interface Mark {
  seq: number;
  who: string;
  what: string;
  /** Claim UID or PV name, when the mark is about one. */
  key?: string;
}

/** A global, totally ordered log: lets tests assert "before"/"after" without reading clocks. */
export class Timeline {
  readonly marks: Mark[] = [];
  private next = 1;

  mark(who: string, what: string, key?: string): Mark {
    const m: Mark = { seq: this.next++, who, what, ...(key === undefined ? {} : { key }) };
    this.marks.push(m);
    return m;
  }

  /** Marks matching the filter, in order. */
  find(filter: Partial<Omit<Mark, 'seq'>>): Mark[] {
    return this.marks.filter(
      (m) =>
        (filter.who === undefined || m.who === filter.who) &&
        (filter.what === undefined || m.what === filter.what) &&
        (filter.key === undefined || m.key === filter.key),
    );
  }

  /** The first mark matching the filter; throws when there is none. */
  first(filter: Partial<Omit<Mark, 'seq'>>): Mark {
    const m = this.find(filter)[0];
    if (m === undefined) throw new Error(`no mark ${JSON.stringify(filter)}`);
    return m;
  }
}

/** A provision call as the backend saw it. */
export interface ProvisionRecord {
  who: string;
  claimUid: string;
  claimName: string;
  pvName: string;
  /** Whether the backing volume already existed (a repeated, idempotent call). */
  reused: boolean;
  /** How the call ended: `failed` when the backend refused it (see `failProvision`). */
  outcome: 'ok' | 'aborted' | 'failed' | 'pending';
  start: number;
}

/** A delete call as the backend saw it. */
export interface DeleteRecord {
  who: string;
  pvName: string;
  /** Whether the backing volume existed and was removed by this call. */
  removed: boolean;
  /** Whether the backend refused the call (see `failDelete`); the volume is then kept. */
  failed: boolean;
  seq: number;
}

/** How a {@link FakeBackend} provisioner behaves. */
export interface ProvisionerOptions {
  delayMs?: number;
  honourAbort?: boolean;
  failProvision?: (call: number) => string | undefined;
  failDelete?: (call: number) => string | undefined;
}

/**
 * The storage backend behind the provisioners: a set of backing volumes. `provision` adds `pvName` (idempotent: an
 * existing volume is reused), `delete` removes it (idempotent: deleting a missing one succeeds). Every call is
 * recorded, per claim and per volume, with who made it (one provisioner per controller, all on one backend).
 */
export class FakeBackend {
  readonly backing = new Set<string>();
  readonly provisions: ProvisionRecord[] = [];
  readonly deletes: DeleteRecord[] = [];
  /** Provision calls under way now, and the most there ever were at once. */
  active = 0;
  maxActive = 0;

  constructor(readonly timeline: Timeline) {}

  /**
   * A provisioner for controller `who`. With `delayMs`, the call creates the backing volume, then takes that long
   * before it returns; with `honourAbort`, an abort in that window makes it fail (the volume stays behind, as a
   * real backend's half-finished operation would, and a repeated call must reuse it). `failProvision` and
   * `failDelete` make the n-th call (from 1) for a claim or volume fail with the message they return, before
   * anything is created or removed.
   */
  provisioner(who: string, options: ProvisionerOptions = {}): Provisioner {
    const { delayMs = 0, honourAbort = false, failProvision = () => undefined, failDelete = () => undefined } = options;
    return {
      provision: async (o, signal) => {
        const claimUid = o.pvc.metadata?.uid ?? '';
        const record: ProvisionRecord = {
          who,
          claimUid,
          claimName: o.pvc.metadata?.name ?? '',
          pvName: o.pvName,
          reused: this.backing.has(o.pvName),
          outcome: 'pending',
          start: this.timeline.mark(who, 'provision', claimUid).seq,
        };
        this.provisions.push(record);
        const refusal = failProvision(this.provisions.filter((p) => p.claimUid === claimUid).length);
        if (refusal !== undefined) {
          record.outcome = 'failed';
          throw new Error(refusal);
        }
        this.backing.add(o.pvName);
        this.active += 1;
        this.maxActive = Math.max(this.maxActive, this.active);
        try {
          await this.pause(delayMs, honourAbort, signal, record);
        } finally {
          this.active -= 1;
        }
        record.outcome = 'ok';
        return { volume: volumeTemplate(o.pvName, o.pvc, o.storageClass) };
      },
      delete: async (pv) => {
        const pvName = pv.metadata?.name ?? '';
        const seq = this.timeline.mark(who, 'delete', pvName).seq;
        const refusal = failDelete(this.deletes.filter((d) => d.pvName === pvName).length + 1);
        if (refusal !== undefined) {
          this.deletes.push({ who, pvName, removed: false, failed: true, seq });
          throw new Error(refusal);
        }
        const removed = this.backing.delete(pvName);
        this.deletes.push({ who, pvName, removed, failed: false, seq });
      },
    };
  }

  /** Waits `delayMs`; with `honourAbort`, an abort meanwhile fails the call (marked `provision-aborted`). */
  private async pause(
    delayMs: number,
    honourAbort: boolean,
    signal: AbortSignal,
    record: ProvisionRecord,
  ): Promise<void> {
    if (delayMs <= 0) return;
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          clearTimeout(timer);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, delayMs);
        if (!honourAbort) return;
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
    } catch (err) {
      record.outcome = 'aborted';
      this.timeline.mark(record.who, 'provision-aborted', record.claimUid);
      throw err;
    }
  }

  /**
   * Who created a backing volume for the claim, one entry per volume created. A claim can be provisioned by
   * several calls: the controller syncs a claim again when it changed during a sync, and the second sync may run
   * before the saved PV reached the controller's cache (Go's library behaves the same). Then provision is called
   * again for the same PV name and reuses the volume, as the provisioner contract requires.
   */
  creators(claimUid: string): string[] {
    return this.provisions
      .filter((p) => p.claimUid === claimUid && p.outcome !== 'failed' && !p.reused)
      .map((p) => p.who);
  }

  /** Provision calls per claim UID. */
  provisionsByClaim(): Map<string, ProvisionRecord[]> {
    return groupBy(this.provisions, (r) => r.claimUid);
  }

  /** Delete calls per PV name. */
  deletesByVolume(): Map<string, DeleteRecord[]> {
    return groupBy(this.deletes, (r) => r.pvName);
  }
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    out.set(k, [...(out.get(k) ?? []), item]);
  }
  return out;
}

/** The PV a trivial provisioner returns: name, capacity and access modes of the claim, policy of the class. */
export function volumeTemplate(
  pvName: string,
  claim: V1PersistentVolumeClaim,
  cls: V1StorageClass,
): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: pvName },
    spec: {
      persistentVolumeReclaimPolicy: cls.reclaimPolicy ?? 'Delete',
      accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? '1Mi' },
      nfs: { server: 'backend.example', path: `/exports/${pvName}` },
    },
  };
}

/** A controller started by a test, with what the test needs to stop it as a crash would. */
export interface RunningController {
  identity: string;
  controller: ProvisionController;
  abort: AbortController;
  /** `run`'s promise; settles (never rejects here) once the controller stopped. */
  running: Promise<unknown>;
  /** Whether `run` has settled. */
  stopped(): boolean;
}

/**
 * Starts a controller for `provisioner` and marks its leadership transitions, its provisioned claims and its end on
 * the timeline. Leader election is on unless the options say otherwise; the Lease lives in `default`.
 */
export function startController(
  kubeConfig: KubeConfig,
  timeline: Timeline,
  identity: string,
  options: Omit<ProvisionControllerOptions, 'kubeConfig' | 'identity'>,
): RunningController {
  const controller = new ProvisionController({
    kubeConfig,
    identity,
    leaderElectionNamespace: 'default',
    ...options,
  });
  controller.on('startedLeading', () => timeline.mark(identity, 'startedLeading'));
  controller.on('stoppedLeading', () => timeline.mark(identity, 'stoppedLeading'));
  controller.on('newLeader', (leader) => timeline.mark(identity, 'newLeader', leader));
  controller.on('provisioned', (claim) => timeline.mark(identity, 'provisioned', claim.metadata?.uid ?? ''));
  const abort = new AbortController();
  let done = false;
  const running = controller.run(abort.signal).then(
    () => {
      done = true;
      timeline.mark(identity, 'runResolved');
    },
    (err: unknown) => {
      done = true;
      timeline.mark(identity, 'runRejected', err instanceof Error ? err.name : String(err));
      return err;
    },
  );
  return { identity, controller, abort, running, stopped: () => done };
}

/**
 * Resolves once the controller has started (it leads and its informers have synced); rejects when its run ends
 * first, with the run's error, so that a case fails with the reason instead of at its time limit.
 */
export function started(controller: ProvisionController, running: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    controller.once('started', resolve);
    running.then(
      () => reject(new Error('the controller stopped before it started')),
      (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
    );
  });
}

/** What every scenario starts from: a cluster without nodes, the administrator's API, a timeline, a backend and the PV history. */
export interface Scene {
  cluster: Cluster;
  api: Api;
  timeline: Timeline;
  backend: FakeBackend;
  history: VolumeHistory;
}

/** Starts a {@link Scene} on the tier (its cluster is stopped after the test); the caller stops `history`. */
export async function startScene(tier: Pick<TierContext, 'name' | 'start'>): Promise<Scene> {
  const cluster = await tier.start({ nodes: [], testkit: { scheduler: false, kubelet: false } });
  const api = apiOf(cluster);
  const timeline = new Timeline();
  return { cluster, api, timeline, backend: new FakeBackend(timeline), history: await VolumeHistory.start(api) };
}
