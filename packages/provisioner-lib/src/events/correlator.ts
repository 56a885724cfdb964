import { realClock, type Clock } from '../clock/clock.js';
import { TokenBucket } from '../rate/bucket.js';
import { EventKeys } from './event-keys.js';
import { LruCache } from './lru.js';
import type { EventPatch, PendingEvent } from './types.js';
import { formatTime } from './types.js';

/**
 * Settings of the recorder's event correlator, client-go's `EventCorrelator`. Every default is client-go's (`tools/record/events_cache.go`).
 */
export interface CorrelatorOptions {
  /** Entries in each of the three caches (spam filter, aggregator, de-duplication). Default 4096. */
  lruCacheSize?: number;
  /** Events a source may send about one object in a burst. Default 25. */
  burst?: number;
  /** Refill rate of that token bucket, in events per second. Default 1/300 (one every 5 minutes). */
  qps?: number;
  /** Distinct messages with the same source, object, type and reason before they are combined. Default 10. */
  maxEvents?: number;
  /** Seconds since the last similar event after which the aggregation count starts again. Default 600. */
  maxIntervalSeconds?: number;
  /** The message of a combined Event. Default `(combined from similar events): <message>`. */
  messageFunc?: (event: PendingEvent) => string;
  /** Time source for the token buckets and the aggregation window. Default {@link realClock}. */
  clock?: Clock;
}

/** What to do with an event after correlation. */
export type CorrelateResult =
  | { skip: true }
  | {
      skip: false;
      /** The Event to write: possibly renamed, recounted or combined. */
      event: PendingEvent;
      /** Set when an Event with this name was written before: patch it instead of creating one. */
      patch?: EventPatch;
      /** The cache key to pass to {@link EventCorrelator.updateState} once written. */
      key: string;
    };

/** What the server answered for a written Event, as {@link EventCorrelator.updateState} takes it. */
export interface WrittenEvent {
  name: string;
  count: number;
  firstTimestamp: Date;
}

/** Default message of a combined Event (client-go's `EventAggregatorByReasonMessageFunc`). */
export function combinedMessage(event: PendingEvent): string {
  return `(combined from similar events): ${event.message}`;
}

interface AggregateRecord {
  /**
   * Distinct messages seen in the current window: the one message while there is one (most objects get one message
   * per reason, and a Set for each of thousands of records costs about 150 bytes), a Set from the second on.
   */
  messages: string | Set<string> | undefined;
  /** Clock time of the last similar event. */
  last: number;
}

/** Adds `message` to the record's messages; returns how many distinct messages it has. */
function remember(record: AggregateRecord, message: string): number {
  const m = record.messages;
  if (m === undefined) {
    record.messages = message;
    return 1;
  }
  if (typeof m === 'string') {
    if (m === message) return 1;
    record.messages = new Set([m, message]);
    return 2;
  }
  m.add(message);
  return m.size;
}

/** Forgets the oldest message (client-go pops an arbitrary one). */
function forgetOne(record: AggregateRecord): void {
  const m = record.messages;
  if (typeof m === 'string') record.messages = undefined;
  else if (m !== undefined) {
    const first = m.values().next();
    if (first.done !== true) m.delete(first.value);
  }
}

interface EventLog {
  count: number;
  /** `firstTimestamp` in ms since the epoch: a number takes a sixth of a `Date`'s memory. */
  firstTimestampMs: number;
  name: string;
}

/**
 * client-go's `EventCorrelator`: de-duplicates, aggregates and rate-limits events before they are written.
 *
 * - An event identical to one already written (same source, object, type, reason and message, still in the
 *   de-duplication cache) becomes a patch of that Event's `count`, `lastTimestamp` and `message`.
 * - When `maxEvents` distinct messages with the same source, object, type and reason arrive within
 *   `maxIntervalSeconds` of each other, the event is replaced by one combined Event whose message is
 *   `messageFunc(event)`; later similar events patch that combined Event.
 * - A token bucket per source and object (`burst`, refill `qps`) drops events beyond the budget.
 *
 * The caches are updated in {@link EventCorrelator.correlate} (with the count the write is expected to produce)
 * and again in {@link EventCorrelator.updateState} (with what the server answered), so an event must not be
 * correlated while an earlier event with the same source, object, type and reason is still being written: that
 * event's `updateState` would overwrite the later one's count. The recorder correlates an event only once the
 * previous event of its group is written or given up; other events may be correlated and written in any order.
 */
export class EventCorrelator {
  private readonly clock: Clock;
  private readonly burst: number;
  private readonly qps: number;
  private readonly maxEvents: number;
  private readonly maxIntervalMs: number;
  private readonly messageFunc: (event: PendingEvent) => string;
  private readonly spam: LruCache<TokenBucket>;
  private readonly aggregates: LruCache<AggregateRecord>;
  private readonly logs: LruCache<EventLog>;
  private readonly keys = new EventKeys();

  /** @param options - see {@link CorrelatorOptions}; every field has client-go's default. */
  constructor(options: CorrelatorOptions = {}) {
    const size = options.lruCacheSize ?? 4096;
    this.clock = options.clock ?? realClock;
    this.burst = options.burst ?? 25;
    this.qps = options.qps ?? 1 / 300;
    this.maxEvents = options.maxEvents ?? 10;
    this.maxIntervalMs = (options.maxIntervalSeconds ?? 600) * 1000;
    this.messageFunc = options.messageFunc ?? combinedMessage;
    this.spam = new LruCache(size);
    this.aggregates = new LruCache(size);
    this.logs = new LruCache(size);
  }

  /** Aggregates, de-duplicates and filters `event` (which is not modified). */
  correlate(event: PendingEvent): CorrelateResult {
    const { event: aggregated, key } = this.aggregate(event);
    const { event: observed, patch } = this.observe(aggregated, key);
    if (!this.allow(observed)) return { skip: true };
    return patch === undefined ? { skip: false, event: observed, key } : { skip: false, event: observed, patch, key };
  }

  /**
   * The group an event is correlated in: source, involved object, type and reason. Every key the correlator may
   * file the event under (its exact-repeat key, which adds fieldPath and message, or the key of the combined Event)
   * is determined by this group, so two events in different groups never become the same Event object, and their
   * correlator state never overlaps except for the per-object spam filter. The recorder writes the events of one
   * group one after another, in order, and the events of different groups concurrently.
   */
  groupKey(event: PendingEvent): string {
    return this.keys.similar(event);
  }

  /** Records what the server stored for the Event written under `key`, so the next repeat patches it. */
  updateState(key: string, written: WrittenEvent): void {
    // `new Date(…)` also reads a timestamp that a client other than the library's left as a string.
    const firstTimestampMs = new Date(written.firstTimestamp).getTime();
    this.logs.set(key, { count: written.count, firstTimestampMs, name: written.name });
  }

  private aggregate(event: PendingEvent): { event: PendingEvent; key: string } {
    const now = this.clock.now();
    const aggKey = this.keys.similar(event);
    let record = this.aggregates.get(aggKey);
    if (record === undefined || now - record.last > this.maxIntervalMs) {
      record = { messages: undefined, last: now };
    }
    const distinct = remember(record, event.message);
    record.last = now;
    this.aggregates.set(aggKey, record);
    if (distinct < this.maxEvents) return { event, key: this.keys.identical(event) };

    // Keep the set from growing past the threshold.
    forgetOne(record);
    const combined: PendingEvent = {
      ...event,
      count: 1,
      firstTimestamp: event.lastTimestamp,
      lastTimestamp: event.lastTimestamp,
      message: this.messageFunc(event),
    };
    return { event: combined, key: aggKey };
  }

  private observe(event: PendingEvent, key: string): { event: PendingEvent; patch?: EventPatch } {
    const last = this.logs.get(key);
    let observed = event;
    let patch: EventPatch | undefined;
    if (last !== undefined && last.count > 0) {
      const firstTimestamp = new Date(last.firstTimestampMs);
      observed = { ...event, name: last.name, firstTimestamp, count: last.count + 1 };
      patch = { count: observed.count, lastTimestamp: formatTime(observed.lastTimestamp), message: observed.message };
    }
    this.logs.set(key, {
      count: observed.count,
      firstTimestampMs: observed.firstTimestamp.getTime(),
      name: observed.name,
    });
    return patch === undefined ? { event: observed } : { event: observed, patch };
  }

  private allow(event: PendingEvent): boolean {
    const key = this.keys.object(event);
    let bucket = this.spam.get(key);
    if (bucket === undefined) bucket = new TokenBucket(this.qps, this.burst, this.clock.now());
    this.spam.set(key, bucket);
    return bucket.tryTake(this.clock.now());
  }
}
