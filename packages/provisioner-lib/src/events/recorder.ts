import type { CoreV1Api, CoreV1Event, KubeConfig } from '@kubernetes/client-node';
// client-node's modules by path, not its entry point, which loads every generated API and model.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { describeError } from '../client/api-errors.js';
import { hotPathApi } from '../client/hot-path.js';
import { realClock, sleep, type Clock } from '../clock/clock.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { noopMetrics, type Counter, type MetricsSink } from '../metrics/sink.js';
import { EventCorrelator, type CorrelatorOptions } from './correlator.js';
import type { EventPatch, EventSource, EventType, ObjectReference, PendingEvent } from './types.js';

/** The two calls of client-node's `CoreV1Api` the recorder makes; pass a `CoreV1Api` or anything shaped like it. */
export type EventsApi = Pick<CoreV1Api, 'createNamespacedEvent' | 'patchNamespacedEvent'>;

/** Options of an {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** Reported as the Event's `source` (and `reportingComponent` / `reportingInstance`). */
  source: EventSource;
  /** API client for the writes. One of `client` or `kubeConfig` is required; `client` wins. */
  client?: EventsApi;
  /**
   * Used to make a client when no `client` is given: the library's lean JSON client, through the shared keep-alive
   * pool and the KubeConfig's client-side rate limit, if one is set, at low priority (other requests waiting for
   * a token go first).
   */
  kubeConfig?: KubeConfig;
  /** Where write failures and dropped events are logged. Default {@link silentLogger}. */
  logger?: Logger;
  /**
   * Where {@link EVENT_RECORDER_DROPPED_EVENTS} is counted. Default {@link noopMetrics}. Recorders sharing a sink
   * share the counter.
   */
  metrics?: MetricsSink;
  /** Time source for the spam filter, the aggregation window and retry sleeps. Default {@link realClock}. */
  clock?: Clock;
  /** Wall-clock time in nanoseconds since the Unix epoch, for Event names and timestamps. Default `Date.now()`. */
  nowNanos?: () => bigint;
  /**
   * Events waiting to be written, or waiting to be retried, before new ones are dropped. Default 1000 (client-go's
   * `maxQueuedEvents`). Events being written at the moment do not count.
   */
  queueSize?: number;
  /**
   * Writes in flight at once. Default {@link DEFAULT_EVENT_WRITE_CONCURRENCY} (8). Events with the same source, involved object, type and reason (all that
   * could end up as one Event object) are still written one after another in the order they were recorded; a
   * retry sleep does not hold a write slot. 1 gives client-go's single serial writer.
   *
   * Keep it in proportion to the writers that produce events: the API server (and a client-side rate limit shared
   * with them) serves requests about first come, first served, so the recorder gets a share of it in proportion to
   * its writes in flight. A `ProvisionController` sets two per claim worker, as each provisioned claim records two
   * Events for its one PV write.
   */
  concurrency?: number;
  /** Attempts per event before it is given up. Default 12 (client-go's `maxTriesPerEvent`). */
  maxTries?: number;
  /** Sleep between attempts in ms; the first sleep is a random fraction of it. Default 10 000 (client-go). */
  retryDelayMs?: number;
  /** Random source in [0, 1) for the first retry's jitter. Default `Math.random`. */
  random?: () => number;
  /** Spam filter and aggregation settings; the clock defaults to `clock`. */
  correlator?: CorrelatorOptions;
}

interface QueuedEvent {
  event: PendingEvent;
  /** Order of acceptance, for {@link EventRecorder.flush}. */
  seq: number;
}

/** The events of one correlation group (source, object, type, reason): written one at a time, in order. */
interface Lane {
  /** Events not started yet, oldest first. */
  waiting: QueuedEvent[];
  /** An event of the group is being correlated, written, or is waiting to be retried. */
  running: boolean;
}

/** A pending {@link EventRecorder.flush}: resolves when the events accepted before it (seq < `before`) are done. */
interface FlushWaiter {
  before: number;
  remaining: number;
  resolve: () => void;
}

/** How a write attempt ended: written (or already there), not written and not to be retried, or to be retried. */
type Outcome = 'done' | 'rejected' | 'retry';

/** Writes in flight at once unless {@link EventRecorderOptions.concurrency} says otherwise. */
export const DEFAULT_EVENT_WRITE_CONCURRENCY = 8;

/**
 * Name of the counter of Events the recorder accepted to record but did not write, by `reason`:
 *
 * - `queue_full`: the queue held `queueSize` events (client-go's `maxQueuedEvents` guard);
 * - `shut_down`: recorded after {@link EventRecorder.shutDown};
 * - `retry_limit`: still failing (network errors, 429, 5xx) after `maxTries` attempts, or when the recorder was shut
 *   down between attempts;
 * - `rejected`: answered with a 4xx that is not worth retrying (403, 422, a terminating namespace, …); a 409 means
 *   the Event is there already and is not counted.
 *
 * Each series starts at 0. Events the spam filter holds back are not counted: their repeats are counted on the
 * Event by its next patch, as in client-go.
 */
export const EVENT_RECORDER_DROPPED_EVENTS = 'event_recorder_dropped_events_total';

/** The values of the `reason` label of {@link EVENT_RECORDER_DROPPED_EVENTS}. */
export type DroppedEventReason = 'queue_full' | 'shut_down' | 'retry_limit' | 'rejected';

const DROP_REASONS: readonly DroppedEventReason[] = ['queue_full', 'shut_down', 'retry_limit', 'rejected'];

// One counter per sink, shared by the recorders reporting to it, so that a sink backed by a registry that refuses
// duplicate names is asked for it once.
const droppedBySink = new WeakMap<MetricsSink, Counter>();

function droppedCounter(sink: MetricsSink): Counter {
  let counter = droppedBySink.get(sink);
  if (counter === undefined) {
    counter = sink.counter({
      name: EVENT_RECORDER_DROPPED_EVENTS,
      help: 'Events the event recorder did not write to the API server, by reason: queue_full, shut_down, retry_limit, rejected.',
      labelNames: ['reason'],
    });
    for (const reason of DROP_REASONS) counter.inc({ reason }, 0);
    droppedBySink.set(sink, counter);
  }
  return counter;
}

const EVENT_TYPES: ReadonlySet<string> = new Set<EventType>(['Normal', 'Warning']);

/**
 * Records core/v1 Events the way client-go's broadcaster and `EventCorrelator` do.
 *
 * `event()` builds the Event at once (name `<involvedName>.<unix-nano hex>`, `firstTimestamp` = `lastTimestamp` =
 * now, count 1) and puts it on a bounded queue; it never blocks or throws. Events are then correlated as by
 * client-go's `EventCorrelator` (see {@link CorrelatorOptions}: repeats become merge patches of `count`,
 * `lastTimestamp` and `message`; similar events are combined after 10; a token bucket per source and object drops
 * spam) and written, retrying network errors,
 * 429 and 5xx answers up to `maxTries` times with `retryDelayMs` between tries. Other 4xx answers (409
 * AlreadyExists, 422 Invalid, 403 for a terminating namespace, …) are not retried. A patch of an Event that no
 * longer exists (404) falls back to creating it.
 *
 * Unlike client-go, which writes one event at a time, up to `concurrency` (default 8) writes are in flight at once,
 * so that bursts (two events per provisioned claim) do not overflow the queue. Events of one correlation group
 * (same source, involved object, type and reason: everything that may correlate to the same Event object) are
 * correlated and written strictly one after another in the order they were recorded, so a repeat's patch always
 * follows the create of its Event. Groups take turns in the order their events arrived. A write slot is held only
 * while a request is in flight: while an event sleeps before a retry, events of other groups proceed (events of its
 * own group wait behind it), and a retry gets the next free slot before new groups start.
 *
 * Events about cluster-scoped objects go to namespace `default`.
 */
export class EventRecorder {
  private readonly source: EventSource;
  private readonly client: EventsApi;
  private readonly logger: Logger;
  private readonly dropped: Counter;
  private readonly clock: Clock;
  private readonly nowNanos: () => bigint;
  private readonly queueSize: number;
  private readonly concurrency: number;
  private readonly maxTries: number;
  private readonly retryDelayMs: number;
  private readonly random: () => number;
  private readonly correlator: EventCorrelator;
  private readonly stop = new AbortController();
  /** Correlation groups with events waiting or running, by {@link EventCorrelator.groupKey}. */
  private readonly lanes = new Map<string, Lane>();
  /** Keys of lanes with waiting events and none running, in the order they became ready. */
  private ready: string[] = [];
  /** Events counted against `queueSize`: waiting in a lane, or between a failed attempt and the next one. */
  private backlog = 0;
  /** Write slots taken (requests in flight), at most `concurrency`. */
  private writing = 0;
  /** Retries waiting for a write slot; served before new lanes start. */
  private readonly slotWaiters: (() => void)[] = [];
  private pumping = false;
  private nextSeq = 0;
  /** Accepted events not yet written, given up or dropped by the spam filter. */
  private unfinished = 0;
  private flushWaiters: FlushWaiter[] = [];
  private lastNanos = 0n;
  private sourceCopy: EventSource | undefined;
  private sharedTime: Date | undefined;

  /**
   * @throws Error when neither `client` nor `kubeConfig` is given.
   * @throws RangeError when `concurrency` is not a positive integer.
   */
  constructor(options: EventRecorderOptions) {
    if (options.client !== undefined) this.client = options.client;
    else if (options.kubeConfig !== undefined) this.client = hotPathApi(options.kubeConfig, {}, 'low');
    else throw new Error('EventRecorder needs a client or a kubeConfig');
    this.source = options.source;
    this.logger = options.logger ?? silentLogger;
    this.dropped = droppedCounter(options.metrics ?? noopMetrics);
    this.clock = options.clock ?? realClock;
    this.nowNanos = options.nowNanos ?? (() => BigInt(Date.now()) * 1_000_000n);
    this.queueSize = options.queueSize ?? 1000;
    this.concurrency = options.concurrency ?? DEFAULT_EVENT_WRITE_CONCURRENCY;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) {
      throw new RangeError(`EventRecorder concurrency must be a positive integer, got ${this.concurrency}`);
    }
    this.maxTries = options.maxTries ?? 12;
    this.retryDelayMs = options.retryDelayMs ?? 10_000;
    this.random = options.random ?? Math.random;
    this.correlator = new EventCorrelator({ clock: this.clock, ...options.correlator });
  }

  /**
   * Queues an Event about `ref`. Never throws and never waits: an invalid type, a full queue or a recorder that
   * was shut down make it log and drop the event.
   */
  event(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    try {
      if (!EVENT_TYPES.has(type)) {
        this.logger.error({ type, reason }, 'Unsupported event type, event dropped');
        return;
      }
      if (this.stop.signal.aborted) {
        this.dropped.inc({ reason: 'shut_down' });
        this.logger.error({ object: refName(ref), reason }, 'Event recorder is shut down, event dropped');
        return;
      }
      if (this.backlog >= this.queueSize) {
        this.dropped.inc({ reason: 'queue_full' });
        this.logger.error({ object: refName(ref), reason }, 'Too many queued events, event dropped');
        return;
      }
      const event = this.makeEvent(ref, type, reason, message);
      const key = this.correlator.groupKey(event);
      const queued: QueuedEvent = { event, seq: this.nextSeq++ };
      const lane = this.lanes.get(key);
      if (lane === undefined) {
        // Made with its one event: most lanes never hold more, and `[]` with a push reserves room for 17.
        this.lanes.set(key, { waiting: [queued], running: false });
        this.ready.push(key);
      } else {
        if (!lane.running && lane.waiting.length === 0) this.ready.push(key);
        lane.waiting.push(queued);
      }
      this.backlog++;
      this.unfinished++;
      this.pump();
    } catch (err) {
      this.logger.error({ err }, 'Unable to record event');
    }
  }

  /**
   * Resolves once every event queued before the call has been written, given up or dropped by the spam filter;
   * events recorded later are not waited for. Never rejects.
   */
  flush(): Promise<void> {
    if (this.unfinished === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.flushWaiters.push({ before: this.nextSeq, remaining: this.unfinished, resolve });
    });
  }

  /**
   * Stops accepting events and cancels retry sleeps. Events already queued are still tried once each; await
   * {@link flush} to wait for them.
   */
  shutDown(): void {
    this.stop.abort(new Error('event recorder shut down'));
  }

  private makeEvent(ref: ObjectReference, type: EventType, reason: string, message: string): PendingEvent {
    let nanos = this.nowNanos();
    if (nanos <= this.lastNanos) nanos = this.lastNanos + 1n; // unique names even within one millisecond
    this.lastNanos = nanos;
    const time = this.timestamp(Number(nanos / 1_000_000_000n) * 1000);
    const involvedObject: ObjectReference = { kind: ref.kind, name: ref.name };
    if (ref.namespace !== undefined && ref.namespace !== '') involvedObject.namespace = ref.namespace;
    if (ref.apiVersion !== undefined) involvedObject.apiVersion = ref.apiVersion;
    if (ref.uid !== undefined) involvedObject.uid = ref.uid;
    if (ref.resourceVersion !== undefined) involvedObject.resourceVersion = ref.resourceVersion;
    if (ref.fieldPath !== undefined) involvedObject.fieldPath = ref.fieldPath;
    return {
      // `join` makes one flat string, where a template would keep the name and the suffix as separate parts.
      name: [ref.name, nanos.toString(16)].join('.'),
      namespace: involvedObject.namespace ?? 'default',
      involvedObject,
      source: this.eventSource(),
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: time,
      lastTimestamp: time,
    };
  }

  /**
   * A copy of `source` for the events, shared by the events made while `source` reads the same: a copy for each of
   * thousands of queued events would cost about 32 bytes each.
   */
  private eventSource(): EventSource {
    const copy = this.sourceCopy;
    if (copy !== undefined && copy.component === this.source.component && copy.host === this.source.host) return copy;
    this.sourceCopy = { ...this.source };
    return this.sourceCopy;
  }

  /** The time `ms` as a Date, shared by the events made in the same second (96 bytes each otherwise). */
  private timestamp(ms: number): Date {
    const last = this.sharedTime;
    if (last !== undefined && last.getTime() === ms) return last;
    this.sharedTime = new Date(ms);
    return this.sharedTime;
  }

  /**
   * Starts the next event of ready lanes while write slots are free (retries waiting for a slot go first, and get
   * it in {@link releaseSlot}). Synchronous; a nested call (a lane finishing without awaiting) is absorbed by the
   * running loop.
   */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.writing < this.concurrency && this.slotWaiters.length === 0) {
        const key = this.ready.shift();
        if (key === undefined) break;
        const lane = this.lanes.get(key);
        const item = lane?.waiting.shift();
        if (lane === undefined || item === undefined) continue; // not reachable: a ready lane has waiting events
        lane.running = true;
        this.backlog--;
        this.writing++;
        void this.run(key, lane, item);
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Processes one event of `lane`, holding the write slot `pump` took for it; then hands the lane back. */
  private async run(key: string, lane: Lane, item: QueuedEvent): Promise<void> {
    try {
      await this.process(item.event);
    } catch (err) {
      this.logger.error({ err }, 'Unable to write event');
    } finally {
      lane.running = false;
      if (lane.waiting.length > 0) this.ready.push(key);
      else this.lanes.delete(key);
      this.finished(item.seq);
      this.pump();
    }
  }

  /** Waits for a write slot for a retry. */
  private acquireSlot(): Promise<void> {
    if (this.writing < this.concurrency) {
      this.writing++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  /** Gives a write slot to the oldest waiting retry, or frees it and starts ready lanes. */
  private releaseSlot(): void {
    const next = this.slotWaiters.shift();
    if (next !== undefined) {
      next();
      return;
    }
    this.writing--;
    this.pump();
  }

  private finished(seq: number): void {
    this.unfinished--;
    let done = false;
    for (const waiter of this.flushWaiters) {
      if (seq < waiter.before && --waiter.remaining === 0) {
        waiter.resolve();
        done = true;
      }
    }
    if (done) this.flushWaiters = this.flushWaiters.filter((w) => w.remaining > 0);
  }

  /**
   * Correlates and writes `event`, retrying as configured. Entered holding a write slot, which is given back
   * after each attempt; between attempts the event counts against `queueSize` again.
   */
  private async process(event: PendingEvent): Promise<void> {
    let holding = true;
    let retrying = false;
    try {
      const result = this.correlator.correlate(event);
      if (result.skip) {
        this.logger.debug(
          { object: refName(event.involvedObject), reason: event.reason },
          'Event dropped by the spam filter',
        );
        return;
      }
      for (let tries = 1; ; tries++) {
        if (!holding) {
          await this.acquireSlot();
          holding = true;
          retrying = false;
          this.backlog--;
        }
        const outcome = await this.write(result.event, result.patch, result.key);
        holding = false;
        this.releaseSlot();
        if (outcome === 'done') return;
        if (outcome === 'rejected') {
          this.dropped.inc({ reason: 'rejected' });
          return;
        }
        const fields = { object: refName(event.involvedObject), reason: event.reason, tries };
        if (tries >= this.maxTries) {
          this.dropped.inc({ reason: 'retry_limit' });
          this.logger.error(fields, 'Unable to write event, retry limit exceeded');
          return;
        }
        if (this.stop.signal.aborted) {
          this.dropped.inc({ reason: 'retry_limit' });
          this.logger.error(fields, 'Unable to write event, recorder is shut down');
          return;
        }
        retrying = true;
        this.backlog++;
        // Randomise the first sleep so that clients do not retry in lockstep after an API server outage.
        const delay = tries === 1 ? this.retryDelayMs * this.random() : this.retryDelayMs;
        try {
          await sleep(this.clock, delay, this.stop.signal);
        } catch {
          // Shut down while sleeping: one last try, as client-go's cancelled broadcaster would not retry.
        }
      }
    } finally {
      if (retrying) this.backlog--;
      if (holding) this.releaseSlot();
    }
  }

  private async write(event: PendingEvent, patch: EventPatch | undefined, key: string): Promise<Outcome> {
    const fields = { object: refName(event.involvedObject), reason: event.reason, event: event.name };
    try {
      let written: CoreV1Event | undefined;
      if (patch !== undefined) {
        try {
          written = await this.client.patchNamespacedEvent(
            { name: event.name, namespace: event.namespace, body: patch },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        } catch (err) {
          if (!(err instanceof ApiException && err.code === 404)) throw err;
          // The Event is gone (expired or deleted): create it again under the same name.
        }
      }
      written ??= await this.client.createNamespacedEvent({ namespace: event.namespace, body: toCoreEvent(event) });
      this.correlator.updateState(key, {
        name: written.metadata.name ?? event.name,
        count: written.count ?? event.count,
        firstTimestamp: written.firstTimestamp ?? event.firstTimestamp,
      });
      return 'done';
    } catch (err) {
      if (err instanceof ApiException && isPermanent(err.code)) {
        const message = describeError(err, { cause: true });
        if (err.code === 409) {
          this.logger.debug({ ...fields, code: err.code, err: message }, 'Server rejected event, will not retry');
          return 'done';
        }
        if (message.includes('is being terminated')) {
          this.logger.debug({ ...fields, code: err.code, err: message }, 'Server rejected event, will not retry');
        } else {
          this.logger.error({ ...fields, code: err.code, err: message }, 'Server rejected event, will not retry');
        }
        return 'rejected';
      }
      this.logger.warn(
        { ...fields, err: describeError(err, { cause: true }) },
        'Unable to write event, may retry after sleeping',
      );
      return 'retry';
    }
  }
}

/** 4xx answers other than 408 Request Timeout and 429 Too Many Requests: sending the same again would not help. */
function isPermanent(code: number): boolean {
  return code >= 400 && code < 500 && code !== 408 && code !== 429;
}

function refName(ref: ObjectReference): string {
  return ref.namespace !== undefined && ref.namespace !== '' ? `${ref.namespace}/${ref.name}` : ref.name;
}

function toCoreEvent(e: PendingEvent): CoreV1Event {
  const source: { component: string; host?: string } = { component: e.source.component };
  if (e.source.host !== undefined) source.host = e.source.host;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: e.name, namespace: e.namespace },
    involvedObject: { ...e.involvedObject },
    reason: e.reason,
    message: e.message,
    type: e.type,
    count: e.count,
    firstTimestamp: e.firstTimestamp,
    lastTimestamp: e.lastTimestamp,
    source,
    reportingComponent: e.source.component,
    reportingInstance: e.source.host ?? '',
  };
}
