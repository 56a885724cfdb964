import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Event, KubeConfig } from '@kubernetes/client-node';
import { realClock, sleep, type Clock } from '../clock/clock.js';
import { silentLogger, type Logger } from '../logging/logger.js';
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
  /** Used to make a `CoreV1Api` when no `client` is given. */
  kubeConfig?: KubeConfig;
  /** Where write failures and dropped events are logged. Default {@link silentLogger}. */
  logger?: Logger;
  /** Time source for the spam filter, the aggregation window and retry sleeps. Default {@link realClock}. */
  clock?: Clock;
  /** Wall-clock time in nanoseconds since the Unix epoch, for Event names and timestamps. Default `Date.now()`. */
  nowNanos?: () => bigint;
  /** Events waiting to be written before new ones are dropped. Default 1000 (client-go's `maxQueuedEvents`). */
  queueSize?: number;
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
}

/** How a write attempt ended. */
type Outcome = 'done' | 'retry';

const EVENT_TYPES: ReadonlySet<string> = new Set<EventType>(['Normal', 'Warning']);

/**
 * Records core/v1 Events the way client-go's broadcaster and `EventCorrelator` do.
 *
 * `event()` builds the Event at once (name `<involvedName>.<unix-nano hex>`, `firstTimestamp` = `lastTimestamp` =
 * now, count 1) and puts it on a bounded queue; it never blocks or throws. One worker takes events in order,
 * correlates them (see {@link EventCorrelator}: repeats become merge patches of `count`, `lastTimestamp` and
 * `message`; similar events are combined after 10; a token bucket per source and object drops spam) and writes
 * them, retrying network errors, 429 and 5xx answers up to `maxTries` times with `retryDelayMs` between tries.
 * Other 4xx answers (409 AlreadyExists, 422 Invalid, 403 for a terminating namespace, …) are not retried. A patch
 * of an Event that no longer exists (404) falls back to creating it.
 *
 * Events about cluster-scoped objects go to namespace `default`.
 */
export class EventRecorder {
  private readonly source: EventSource;
  private readonly client: EventsApi;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly nowNanos: () => bigint;
  private readonly queueSize: number;
  private readonly maxTries: number;
  private readonly retryDelayMs: number;
  private readonly random: () => number;
  private readonly correlator: EventCorrelator;
  private readonly queue: QueuedEvent[] = [];
  private readonly stop = new AbortController();
  private worker: Promise<void> | undefined;
  private lastNanos = 0n;

  /** @throws Error when neither `client` nor `kubeConfig` is given. */
  constructor(options: EventRecorderOptions) {
    if (options.client !== undefined) this.client = options.client;
    else if (options.kubeConfig !== undefined) this.client = options.kubeConfig.makeApiClient(CoreV1Api);
    else throw new Error('EventRecorder needs a client or a kubeConfig');
    this.source = options.source;
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? realClock;
    this.nowNanos = options.nowNanos ?? (() => BigInt(Date.now()) * 1_000_000n);
    this.queueSize = options.queueSize ?? 1000;
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
        this.logger.error({ object: refName(ref), reason }, 'Event recorder is shut down, event dropped');
        return;
      }
      if (this.queue.length >= this.queueSize) {
        this.logger.error({ object: refName(ref), reason }, 'Too many queued events, event dropped');
        return;
      }
      this.queue.push({ event: this.makeEvent(ref, type, reason, message) });
      this.worker ??= this.drain();
    } catch (err) {
      this.logger.error({ err }, 'Unable to record event');
    }
  }

  /** Resolves once every queued event has been written, given up or dropped. Never rejects. */
  async flush(): Promise<void> {
    while (this.worker !== undefined) await this.worker;
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
    const time = new Date(Number(nanos / 1_000_000_000n) * 1000);
    const involvedObject: ObjectReference = { kind: ref.kind, name: ref.name };
    if (ref.namespace !== undefined && ref.namespace !== '') involvedObject.namespace = ref.namespace;
    if (ref.apiVersion !== undefined) involvedObject.apiVersion = ref.apiVersion;
    if (ref.uid !== undefined) involvedObject.uid = ref.uid;
    if (ref.resourceVersion !== undefined) involvedObject.resourceVersion = ref.resourceVersion;
    if (ref.fieldPath !== undefined) involvedObject.fieldPath = ref.fieldPath;
    return {
      name: `${ref.name}.${nanos.toString(16)}`,
      namespace: involvedObject.namespace ?? 'default',
      involvedObject,
      source: { ...this.source },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: time,
      lastTimestamp: time,
    };
  }

  private async drain(): Promise<void> {
    try {
      for (let item = this.queue.shift(); item !== undefined; item = this.queue.shift()) {
        try {
          await this.process(item.event);
        } catch (err) {
          this.logger.error({ err }, 'Unable to write event');
        }
      }
    } finally {
      this.worker = undefined;
    }
  }

  private async process(event: PendingEvent): Promise<void> {
    const result = this.correlator.correlate(event);
    if (result.skip) {
      this.logger.debug({ object: refName(event.involvedObject), reason: event.reason }, 'Event dropped by the spam filter');
      return;
    }
    for (let tries = 1; ; tries++) {
      if ((await this.write(result.event, result.patch, result.key)) === 'done') return;
      const fields = { object: refName(event.involvedObject), reason: event.reason, tries };
      if (tries >= this.maxTries) {
        this.logger.error(fields, 'Unable to write event, retry limit exceeded');
        return;
      }
      if (this.stop.signal.aborted) {
        this.logger.error(fields, 'Unable to write event, recorder is shut down');
        return;
      }
      // Randomise the first sleep so that clients do not retry in lockstep after an API server outage.
      const delay = tries === 1 ? this.retryDelayMs * this.random() : this.retryDelayMs;
      try {
        await sleep(this.clock, delay, this.stop.signal);
      } catch {
        // Shut down while sleeping: one last try, as client-go's cancelled broadcaster would not retry.
      }
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
        const message = errorMessage(err);
        if (err.code === 409 || message.includes('is being terminated')) {
          this.logger.debug({ ...fields, code: err.code, err: message }, 'Server rejected event, will not retry');
        } else {
          this.logger.error({ ...fields, code: err.code, err: message }, 'Server rejected event, will not retry');
        }
        return 'done';
      }
      this.logger.warn({ ...fields, err: errorMessage(err) }, 'Unable to write event, may retry after sleeping');
      return 'retry';
    }
  }
}

/** 4xx answers other than 408 Request Timeout and 429 Too Many Requests: sending the same again would not help. */
function isPermanent(code: number): boolean {
  return code >= 400 && code < 500 && code !== 408 && code !== 429;
}

function errorMessage(err: unknown): string {
  if (err instanceof ApiException) {
    let body: unknown = err.body;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // not a Status: fall through
      }
    }
    if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
      return body.message;
    }
    return `HTTP ${err.code}`;
  }
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}`;
  }
  return String(err);
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
