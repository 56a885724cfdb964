import type { KubeObject } from '../api/objects.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, as the watch layer replays it. */
export interface Change {
  /** Resource key (`pods`, `storage.k8s.io/storageclasses`, ...). */
  resource: string;
  type: ChangeType;
  /** The object after the change (for DELETED: its last state, with the deleting resourceVersion). */
  object: KubeObject;
  /** The object before the change; absent for ADDED. */
  previous?: KubeObject;
  resourceVersion: number;
}

/**
 * A bounded window of recent changes across all resources, like the watch cache of kube-apiserver.
 * A watch can resume from any resourceVersion at or after `compactedAt`; older ones get 410 Expired.
 */
export class ChangeHistory {
  private readonly entries: Change[] = [];
  private start = 0;
  /** The newest resourceVersion that is no longer (or never was) in the window. */
  private compacted: number;

  constructor(
    private readonly capacity: number,
    initialResourceVersion: number,
  ) {
    this.compacted = initialResourceVersion;
  }

  get compactedAt(): number {
    return this.compacted;
  }

  append(change: Change): void {
    this.entries.push(change);
    if (this.entries.length - this.start > this.capacity) {
      const dropped = this.entries[this.start];
      this.start += 1;
      if (dropped !== undefined) this.compacted = dropped.resourceVersion;
    }
    // Reclaim the dropped prefix now and then instead of shifting on every append.
    if (this.start > this.capacity) {
      this.entries.splice(0, this.start);
      this.start = 0;
    }
  }

  /** Changes newer than `resourceVersion`, or `undefined` when that version has been compacted away. */
  since(resourceVersion: number): Change[] | undefined {
    if (resourceVersion < this.compacted) return undefined;
    const out: Change[] = [];
    for (let i = this.start; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (e !== undefined && e.resourceVersion > resourceVersion) out.push(e);
    }
    return out;
  }

  /** Forgets every change up to `resourceVersion` (fault injection: forces 410 Gone on older watches). */
  compact(resourceVersion: number): void {
    while (this.start < this.entries.length) {
      const e = this.entries[this.start];
      if (e === undefined || e.resourceVersion > resourceVersion) break;
      this.start += 1;
    }
    this.compacted = Math.max(this.compacted, resourceVersion);
  }
}
