/**
 * core/v1 Events as a Go controller records them through client-go's `record.EventRecorder`
 * (`k8s.io/client-go/tools/record`): the first occurrence is created as `<object>.<hex nanoseconds>` with count 1,
 * each identical one after it (same source, object, type, reason and message) raises the count and `lastTimestamp`
 * of that Event, and a spam filter lets through a burst of 25 per object, type and reason, then one per five minutes
 * (the occurrences it drops are still counted, so the next one that passes carries the full count).
 */
import type { KubeObject } from '../api/objects.js';
import { StatusError } from '../api/status.js';
import { timestamp, type ObjectStore } from '../store/store.js';

/** What an Event is about: a stored object, which carries its kind and apiVersion. */
export type InvolvedObject = Pick<KubeObject, 'kind' | 'apiVersion' | 'metadata'>;

const CACHE_SIZE = 4096;
const BURST = 25;
const REFILL_MS = 300_000;

interface Observation {
  count: number;
  name: string;
  namespace: string;
  firstTimestamp: string;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A bounded map that forgets the least recently used key, as client-go's LRU caches do. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > CACHE_SIZE) this.map.delete(this.map.keys().next().value ?? '');
  }
}

let lastNanos = 0n;

/** `time.Now().UnixNano()`, strictly increasing so that two Events of one object never share a name. */
function unixNanos(now: number): bigint {
  const n = BigInt(now) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  lastNanos = n > lastNanos ? n : lastNanos + 1n;
  return lastNanos;
}

/** Records Events into the store as one Go controller (`component`) would; see the module comment. */
export class EventRecorder {
  private readonly seen = new Lru<Observation>();
  private readonly buckets = new Lru<Bucket>();

  constructor(
    private readonly store: ObjectStore,
    private readonly component: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records one occurrence of an Event about `obj`. */
  event(obj: InvolvedObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const m = obj.metadata;
    const ref = {
      kind: obj.kind ?? '',
      ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
      name: m.name ?? '',
      uid: m.uid ?? '',
      apiVersion: obj.apiVersion ?? '',
      resourceVersion: m.resourceVersion ?? '',
    };
    const at = this.now();
    const time = timestamp(new Date(at));
    // eventObserve: the same Event again raises the count, whether or not the spam filter then lets it through.
    const key = [
      this.component,
      '',
      ref.kind,
      ref.namespace ?? '',
      ref.name,
      '',
      ref.uid,
      ref.apiVersion,
      type,
      reason,
      message,
    ].join('\u0000');
    const last = this.seen.get(key);
    const observation: Observation =
      last === undefined
        ? {
            count: 1,
            name: `${ref.name}.${unixNanos(at).toString(16)}`,
            namespace: ref.namespace ?? 'default',
            firstTimestamp: time,
          }
        : { ...last, count: last.count + 1 };
    this.seen.set(key, observation);
    if (
      !this.allow(
        [this.component, '', ref.kind, ref.namespace ?? '', ref.name, ref.uid, ref.apiVersion, type, reason].join(
          '\u0000',
        ),
        at,
      )
    )
      return;
    if (last !== undefined) {
      const updated = this.store.modify('events', observation.namespace, observation.name, (e) => {
        Object.assign(e, { count: observation.count, lastTimestamp: time, message });
      });
      if (updated !== undefined) return;
    }
    try {
      this.store.create('events', {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: observation.name, namespace: observation.namespace },
        involvedObject: ref,
        reason,
        message,
        source: { component: this.component },
        firstTimestamp: observation.firstTimestamp,
        lastTimestamp: time,
        count: observation.count,
        type,
        reportingComponent: this.component,
        reportingInstance: '',
      });
    } catch (e) {
      // A namespace on its way out takes no Events; client-go drops them as well.
      if (!(e instanceof StatusError)) throw e;
    }
  }

  /** `EventSourceObjectSpamFilter`: a token bucket per object, type and reason. */
  private allow(key: string, at: number): boolean {
    const b = this.buckets.get(key) ?? { tokens: BURST, at };
    const tokens = Math.min(BURST, b.tokens + (at - b.at) / REFILL_MS);
    if (tokens < 1) {
      this.buckets.set(key, { tokens, at });
      return false;
    }
    this.buckets.set(key, { tokens: tokens - 1, at });
    return true;
  }
}
