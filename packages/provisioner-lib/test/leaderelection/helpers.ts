import { CoordinationV1Api, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '@kprov/testkit';
import { vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import type { Clock } from '../../src/clock/clock.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { Labels, MetricsSink } from '../../src/metrics/sink.js';
import { LeaderElector } from '../../src/leaderelection/elector.js';
import {
  LeaseLock,
  type LeaderElectionEventMessage,
  type LeaderElectionRecord,
  type ObservedLock,
  type ResourceLock,
} from '../../src/leaderelection/lease-lock.js';
import type { LeaderElectionTimings } from '../../src/leaderelection/config.js';

/** A testkit with no simulations: only the API server. */
export function startKit(): Promise<Testkit> {
  return startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
}

let seq = 0;
/** A lease name unique within the test run. */
export function uniqueName(prefix: string): string {
  seq += 1;
  return `${prefix}-${seq}`;
}

/** Short real timings for integration tests: 300 ms lease (1 s in the record), 200 ms renew deadline, 50 ms retry period. */
export const FAST: LeaderElectionTimings = { leaseDurationMs: 300, renewDeadlineMs: 200, retryPeriodMs: 50 };

/** The Lease as JSON straight from the server, times as sent. */
export async function rawLease(
  kit: Testkit,
  namespace: string,
  name: string,
): Promise<{
  metadata: { labels?: Record<string, string>; resourceVersion: string };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}> {
  const res = await fetch(`${kit.url}/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  if (res.status !== 200) throw new Error(`GET lease ${namespace}/${name}: ${res.status}`);
  return (await res.json()) as Awaited<ReturnType<typeof rawLease>>;
}

/** A Lease written by the test itself, as some other holder (with `leaseDurationSeconds` 1 unless given). */
export async function writeForeignLease(
  kit: Testkit,
  namespace: string,
  name: string,
  spec: { holderIdentity: string; renewTime: Date; leaseTransitions?: number; leaseDurationSeconds?: number },
): Promise<V1Lease> {
  const api = kit.kubeConfig.makeApiClient(CoordinationV1Api);
  const body: V1Lease = {
    metadata: { name, namespace },
    spec: {
      holderIdentity: spec.holderIdentity,
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 1,
      acquireTime: new V1MicroTime('2000-01-01T00:00:00Z'),
      renewTime: new V1MicroTime(spec.renewTime.getTime()),
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
  };
  try {
    const current = await api.readNamespacedLease({ name, namespace });
    return await api.replaceNamespacedLease({ name, namespace, body: { ...body, metadata: current.metadata } });
  } catch {
    return await api.createNamespacedLease({ namespace, body });
  }
}

/** A lock that counts the calls it passes on to a LeaseLock. */
export class CountingLock implements ResourceLock {
  gets = 0;
  creates = 0;
  updates = 0;
  /** Requests sent and not yet answered: a fake clock's pending timers are only the elector's once this is 0. */
  inFlight = 0;
  readonly events: string[] = [];
  constructor(readonly inner: LeaseLock) {}
  get identity(): string {
    return this.inner.identity;
  }
  get(signal?: AbortSignal): Promise<ObservedLock | undefined> {
    this.gets += 1;
    return this.track(this.inner.get(signal));
  }
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.creates += 1;
    return this.track(this.inner.create(record, signal));
  }
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.updates += 1;
    return this.track(this.inner.update(record, signal));
  }
  private track<T>(request: Promise<T>): Promise<T> {
    this.inFlight += 1;
    return request.finally(() => {
      this.inFlight -= 1;
    });
  }
  recordEvent(message: LeaderElectionEventMessage): void {
    this.inner.recordEvent(message);
  }
  describe(): string {
    return this.inner.describe();
  }
}

/** A metrics sink that keeps the last value of every gauge series. */
export function recordingMetrics(): { sink: MetricsSink; gauge: (name: string, labels: Labels) => number | undefined } {
  const values = new Map<string, number>();
  const key = (name: string, labels: Labels): string => `${name}${JSON.stringify(labels)}`;
  const noop = { inc: () => undefined, observe: () => undefined };
  const sink: MetricsSink = {
    counter: () => noop,
    histogram: () => noop,
    gauge: (options) => ({
      set: (labels, value) => values.set(key(options.name, labels), value),
      inc: (labels, value = 1) =>
        values.set(key(options.name, labels), (values.get(key(options.name, labels)) ?? 0) + value),
      dec: (labels, value = 1) =>
        values.set(key(options.name, labels), (values.get(key(options.name, labels)) ?? 0) - value),
    }),
  };
  return { sink, gauge: (name, labels) => values.get(key(name, labels)) };
}

/** One candidate with everything its callbacks saw. */
export interface Candidate {
  readonly identity: string;
  readonly lock: CountingLock;
  readonly elector: LeaderElector;
  /** Signals passed to onStartedLeading. */
  readonly leading: AbortSignal[];
  readonly newLeaders: string[];
  /** `reason: message` of recorded events. */
  readonly events: string[];
  /** How many times onStoppedLeading ran. */
  readonly stopped: number;
  /** Starts `run`; the returned promise is also kept as `done`. */
  start(): Promise<void>;
  readonly done: Promise<void> | undefined;
  /** Aborts `run` and waits for it to return. */
  stop(): Promise<void>;
  /** Stops and closes the lock's client. */
  dispose(): Promise<void>;
}

export interface CandidateOptions extends Partial<LeaderElectionTimings> {
  identity: string;
  name: string;
  namespace?: string;
  releaseOnCancel?: boolean;
  clock?: Clock;
  metrics?: MetricsSink;
  /** The guarded work, started with the leading signal; its promise is what onStartedLeading returns. */
  work?: (signal: AbortSignal) => Promise<void>;
}

export function makeCandidate(kit: Testkit, options: CandidateOptions): Candidate {
  const events: string[] = [];
  const leading: AbortSignal[] = [];
  const newLeaders: string[] = [];
  let stopped = 0;
  let done: Promise<void> | undefined;
  const inner = new LeaseLock({
    kubeConfig: kit.kubeConfig,
    namespace: options.namespace ?? 'default',
    name: options.name,
    identity: options.identity,
    recordEvent: (reason, message) => {
      events.push(`${reason}: ${message}`);
    },
  });
  const lock = new CountingLock(inner);
  const controller = new AbortController();
  const elector = new LeaderElector({
    lock,
    leaseDurationMs: options.leaseDurationMs ?? FAST.leaseDurationMs,
    renewDeadlineMs: options.renewDeadlineMs ?? FAST.renewDeadlineMs,
    retryPeriodMs: options.retryPeriodMs ?? FAST.retryPeriodMs,
    releaseOnCancel: options.releaseOnCancel,
    clock: options.clock,
    metrics: options.metrics,
    onStartedLeading: (signal) => {
      leading.push(signal);
      return options.work?.(signal);
    },
    onStoppedLeading: () => {
      stopped += 1;
    },
    onNewLeader: (identity) => {
      newLeaders.push(identity);
    },
  });
  const stop = async (): Promise<void> => {
    controller.abort(new Error('test stopped the candidate'));
    await done;
  };
  return {
    identity: options.identity,
    lock,
    elector,
    leading,
    newLeaders,
    events,
    get stopped() {
      return stopped;
    },
    get done() {
      return done;
    },
    start: () => {
      done = elector.run(controller.signal);
      return done;
    },
    stop,
    dispose: async () => {
      await stop();
      await inner.close();
    },
  };
}

/** Six fractional digits, as metav1.MicroTime is serialized. */
export const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/**
 * A {@link FakeClock} that the test moves on only while no lease request of the candidates is in flight: time passes
 * between requests, never during one, as though every request took no time. However slow the machine, no deadline
 * runs out while a request is under way, so what the candidates do (how many attempts, who leads when) follows from
 * the timings alone.
 */
export class IdleClock {
  readonly clock = new FakeClock();
  private readonly candidates: readonly Candidate[];

  /** @param candidates - whose requests must be answered before time moves; candidates added later count too. */
  constructor(candidates: readonly Candidate[]) {
    this.candidates = candidates;
  }

  /** Moves time on by `ms`, in steps of {@link IDLE_STEP_MS}, each once every request in flight was answered. */
  async advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= IDLE_STEP_MS) {
      await this.idle();
      await this.clock.advanceAsync(Math.min(IDLE_STEP_MS, left));
    }
    await this.idle();
  }

  /**
   * Moves time on in steps until `condition` holds (checked between steps); rejects, naming `what`, once `maxMs`
   * of fake time went by without it.
   */
  async until(condition: () => boolean | Promise<boolean>, what: string, maxMs = 60_000): Promise<void> {
    const start = this.clock.now();
    for (;;) {
      await this.idle();
      if (await condition()) return;
      if (this.clock.now() - start >= maxMs) throw new Error(`not within ${maxMs} fake ms: ${what}`);
      await this.clock.advanceAsync(IDLE_STEP_MS);
    }
  }

  /** Resolves once no candidate has a request in flight on two event-loop turns in a row (a reply may lead to a next request). */
  private async idle(): Promise<void> {
    const busy = (): boolean => this.candidates.some((c) => c.lock.inFlight > 0);
    await vi.waitFor(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (busy()) throw new Error('a lease request is in flight');
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (busy()) throw new Error('a lease request is in flight');
    }, WAIT);
  }
}

/** Fake milliseconds an {@link IdleClock} moves in one step: a fifth of the shortest retry period of the tests. */
export const IDLE_STEP_MS = 10;
