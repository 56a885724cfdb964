/**
 * Shared pieces of the resilience tests: an in-memory storage backend with a recording provisioner, a timeline that
 * orders what the provisioners and controllers did, PV creation tracking from the API server's change stream, and a
 * controller runner.
 */
import { startApiServer, type Testkit } from '@kprov/testkit';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { ProvisionController } from '../../src/controller/controller.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import type { Provisioner } from '../../src/controller/provisioner.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

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
  /** How the call ended. */
  outcome: 'ok' | 'aborted' | 'pending';
  start: number;
}

/** A delete call as the backend saw it. */
export interface DeleteRecord {
  who: string;
  pvName: string;
  /** Whether the backing volume existed and was removed by this call. */
  removed: boolean;
  seq: number;
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
   * real backend's half-finished operation would, and a repeated call must reuse it).
   */
  provisioner(who: string, options: { delayMs?: number; honourAbort?: boolean } = {}): Provisioner {
    const { delayMs = 0, honourAbort = false } = options;
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
        const removed = this.backing.delete(pvName);
        this.deletes.push({ who, pvName, removed, seq: this.timeline.mark(who, 'delete', pvName).seq });
      },
    };
  }

  /** Waits `delayMs`; with `honourAbort`, an abort meanwhile fails the call (marked `provision-aborted`). */
  private async pause(delayMs: number, honourAbort: boolean, signal: AbortSignal, record: ProvisionRecord): Promise<void> {
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
export function volumeTemplate(pvName: string, claim: V1PersistentVolumeClaim, cls: V1StorageClass): V1PersistentVolume {
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

export function storageClass(name: string, provisioner: string): V1StorageClass {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, reclaimPolicy: 'Delete' };
}

/** Creates the class in the store (what `kubectl apply` would do; not subject to injected request faults). */
export function createClass(kit: Testkit, name: string, provisioner: string): void {
  kit.store.create('storage.k8s.io/storageclasses', storageClass(name, provisioner) as unknown as Obj);
}

/**
 * Creates claims `<prefix>-0 … <prefix>-(n-1)` of the class directly in the store (the user's side, which the
 * injected request faults do not target); the binder annotates them for the provisioner. Returns their UIDs.
 */
export function createClaims(kit: Testkit, prefix: string, n: number, className: string): string[] {
  const uids: string[] = [];
  for (let i = 0; i < n; i++) {
    const claim: V1PersistentVolumeClaim = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: `${prefix}-${i}`, namespace: 'default' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: className },
    };
    const created = kit.store.create('persistentvolumeclaims', claim as unknown as Obj);
    uids.push(String(created.metadata.uid));
  }
  return uids;
}

/** Deletes claims by name from the store (the user's side). */
export function deleteClaims(kit: Testkit, names: readonly string[]): void {
  for (const name of names) kit.store.delete('persistentvolumeclaims', 'default', name);
}

export function claimsInStore(kit: Testkit): V1PersistentVolumeClaim[] {
  return kit.store.list('persistentvolumeclaims') as unknown as V1PersistentVolumeClaim[];
}

export function volumesInStore(kit: Testkit): V1PersistentVolume[] {
  return kit.store.list('persistentvolumes') as unknown as V1PersistentVolume[];
}

/** Names of the claims (of those given) that are not Bound yet. */
export function unbound(kit: Testkit, names: readonly string[]): string[] {
  const phase = new Map(claimsInStore(kit).map((c) => [c.metadata?.name ?? '', c.status?.phase]));
  return names.filter((n) => phase.get(n) !== 'Bound');
}

/**
 * Every PV the API server ever stored, from its change stream: creations per claim UID (the claimRef the
 * provisioner's controller set) and deletions per PV name.
 */
export class VolumeHistory {
  readonly createdByClaim = new Map<string, string[]>();
  readonly deleted = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(kit: Testkit) {
    this.unsubscribe = kit.store.subscribe((change) => {
      if (change.resource !== 'persistentvolumes') return;
      const pv = change.object as unknown as V1PersistentVolume;
      const name = pv.metadata?.name ?? '';
      if (change.type === 'ADDED') {
        const uid = pv.spec?.claimRef?.uid ?? '';
        this.createdByClaim.set(uid, [...(this.createdByClaim.get(uid) ?? []), name]);
      } else if (change.type === 'DELETED') {
        this.deleted.set(name, (this.deleted.get(name) ?? 0) + 1);
      }
    });
  }

  /** Claims that ever had more than one PV created for them. */
  duplicates(): [string, string[]][] {
    return [...this.createdByClaim].filter(([, names]) => names.length > 1);
  }

  stop(): void {
    this.unsubscribe();
  }
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
  kit: Testkit,
  timeline: Timeline,
  identity: string,
  options: Omit<ProvisionControllerOptions, 'kubeConfig' | 'identity'>,
): RunningController {
  const controller = new ProvisionController({
    kubeConfig: kit.kubeConfig,
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

/** What every scenario starts from: an API server without scheduler and kubelet, a timeline, a backend and the PV history. */
export interface Scene {
  kit: Testkit;
  timeline: Timeline;
  backend: FakeBackend;
  history: VolumeHistory;
}

/** Starts a {@link Scene}; the caller stops `kit`. */
export async function startScene(): Promise<Scene> {
  const kit = await startApiServer({ nodes: [], scheduler: false, kubelet: false });
  const timeline = new Timeline();
  return { kit, timeline, backend: new FakeBackend(timeline), history: new VolumeHistory(kit) };
}
