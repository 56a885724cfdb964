import type { KubernetesListObject, KubernetesObject, Watch } from '@kubernetes/client-node';
import { Backoff } from '../backoff/backoff.js';
import { realClock, sleep, type Clock, type TimerHandle } from '../clock/clock.js';
import { silentLogger, type Logger } from '../logging/logger.js';
import { describeError } from '../client/api-errors.js';
import { isWatchTimeout, statusCodeOf } from './errors.js';

/**
 * What the watcher tells its consumer, as kube-runtime's `watcher::Event`. A (re)list is framed explicitly:
 * `Init`, one `InitApply` per listed object, then `InitDone`; a consumer that keeps a cache buffers between
 * `Init` and `InitDone` and swaps at `InitDone` (objects deleted while disconnected simply are not in the new set).
 * `Apply` (added or modified) and `Delete` come from the watch.
 */
export type WatcherEvent<T> =
  | { type: 'Init' }
  | { type: 'InitApply'; object: T }
  | { type: 'InitDone'; resourceVersion: string }
  | { type: 'Apply'; object: T }
  | { type: 'Delete'; object: T };

/** Parameters of one list page request. */
export interface ListParams {
  /** Page size. */
  limit: number;
  /** Continue token from the previous page; absent on the first page. */
  continue?: string;
  /**
   * `'0'`: any state, which kube-apiserver serves from its watch cache in one answer, ignoring `limit` (see
   * {@link WatcherOptions.initialListFromCache}). Absent: the most recent state, page by page.
   */
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * Lists one page, e.g. with a generated client: `(p, signal) => core.listPersistentVolumeForAllNamespaces({ limit:
 * p.limit, _continue: p.continue }, withSignal(signal))`. Should honour `signal`; errors are retried with backoff.
 *
 * A lister that decodes the answer as it arrives (such as {@link RestClient.list}'s) may instead hand each item to
 * `each` as soon as it is decoded, and resolve with the page's `metadata` and the items it did not hand over (none):
 * a large list is then never held whole, its items go to the cache one by one. Items handed to `each` come before
 * those returned in `items`.
 */
export type ListFn<T extends KubernetesObject> = (
  params: ListParams,
  signal: AbortSignal,
  each: (item: T) => void,
) => Promise<KubernetesListObject<T>>;

/**
 * What the watcher needs of client-node's `Watch`: its `watch` method (the library's own JSON client has one too).
 * Its `done` must be called once for every watch, also after the watcher aborts it (client-node's `Watch` and
 * `RestClient` do, once the connection is closed): a stop waits for it.
 */
export type WatchLike = Pick<Watch, 'watch'>;

/** Something that yields growing delays: `next()` the next delay in ms, `reset()` after success. */
export interface BackoffLike {
  next(): number;
  reset(): void;
}

/**
 * Why the watcher restarted. `ended`: the server closed the watch normally (its `timeoutSeconds`); `timeout`: the
 * watch went without data for its inactivity limit and ended with a `TimeoutError`: a `RestClient` watch (the
 * informers' watches) has no such limit unless its `watchInactivityMs` is set, client-node's `Watch` (such as
 * `watchWithAgent`'s) has 30 s; `dropped`: the connection failed without an HTTP status (reset, refused, cut);
 * `expired`: 410 Gone (ERROR event or response), so a full relist follows; `error`: an HTTP error status or an ERROR
 * event other than 410, or a protocol error (event without resourceVersion); `idle`: nothing, not even a bookmark,
 * for `idleTimeoutMs`, so a full relist follows; `list-failed`: the list failed.
 */
export type RestartReason = 'ended' | 'timeout' | 'dropped' | 'expired' | 'error' | 'idle' | 'list-failed';

/** A diagnostic report of one restart. */
export interface WatcherRestart {
  reason: RestartReason;
  /** Whether the next step is a full list (otherwise a watch from the last resourceVersion). */
  relist: boolean;
  /** Delay before the next step, in ms (0: at once). */
  delayMs: number;
  /** HTTP status code, when there was one. */
  statusCode?: number;
  /** The underlying error, when there was one. */
  error?: unknown;
  /** The resourceVersion a watch resumes from (the last one seen). */
  resourceVersion?: string;
}

/** Default page size of the initial list: 500, as client-go's pager and kube-runtime. */
export const DEFAULT_PAGE_SIZE = 500;
/** Default minimum watch length asked from the server: 300 s; each watch asks a random value in [300, 600) s, as client-go. */
export const DEFAULT_MIN_WATCH_TIMEOUT_SECONDS = 300;
/** Default inactivity limit: 5 min plus 30 s margin without any event (bookmarks included) forces a relist. */
export const DEFAULT_IDLE_TIMEOUT_MS = 330_000;
/** A watch that ends normally sooner than this (ms) without any event counts as a failure and backs off. */
const SHORT_WATCH_MS = 1000;

/** Options of {@link Watcher}. */
export interface WatcherOptions<T extends KubernetesObject> {
  /** Lists a page; see {@link ListFn}. */
  list: ListFn<T>;
  /** The client-node `Watch` to use (e.g. `watchWithAgent(kc)`), or anything with its `watch` method. */
  watch: WatchLike;
  /** Collection path to watch, e.g. `/api/v1/persistentvolumeclaims`. */
  path: string;
  /** Label selector, passed to both list and watch. Default none. */
  labelSelector?: string;
  /** Field selector, passed to both list and watch. Default none. */
  fieldSelector?: string;
  /** Turns a raw watch-event object into `T` (list items are `list`'s business). Default: as is. */
  decode?: (raw: unknown) => T;
  /** Initial list page size. Default {@link DEFAULT_PAGE_SIZE} (500). */
  pageSize?: number;
  /**
   * Make the first list ask for `resourceVersion=0`, as client-go's informers do: kube-apiserver serves it from its
   * watch cache, whole, rather than page by page from etcd (on v1.32, 2,000 claims cost its CPU 14–19 ms instead of
   * 36–42 ms). The state it returns may trail the latest by as much as the watch cache does; the watch that follows
   * from its resourceVersion brings the cache up to date. Relists (after 410 Gone or `idleTimeoutMs`) read the most
   * recent state, page by page, so a cache never goes back to an older state. Default false.
   */
  initialListFromCache?: boolean;
  /** Lower bound of the random `timeoutSeconds` of each watch (upper bound twice it). Default 300. */
  minWatchTimeoutSeconds?: number;
  /** Relist when nothing arrived for this long, in ms. Default {@link DEFAULT_IDLE_TIMEOUT_MS} (5 min 30 s). */
  idleTimeoutMs?: number;
  /** Delays after failures. Default `new Backoff({ clock })`: 800 ms → 30 s, ×2, jittered, reset after 2 min. */
  backoff?: BackoffLike;
  /** Time source for the backoff sleeps and the idle watchdog. Default {@link realClock}. */
  clock?: Clock;
  /** Logger for restarts (403 at warn, normal ends at debug, the rest at info). Default silent. */
  logger?: Logger;
  /**
   * Begin with a watch from this resourceVersion instead of a list, for a caller that already knows the state up to
   * it (e.g. from the response that created the object it waits for): one request less. No `Init`/`InitDone` frame
   * comes until a relist (after 410 Gone or `idleTimeoutMs` of silence). Used by the first `run` only. Default: list
   * first.
   */
  resourceVersion?: string;
  /** Called on every restart, for diagnostics and tests. Exceptions are caught and logged. */
  onRestart?: (restart: WatcherRestart) => void;
}

type WatchEnd =
  | { reason: 'ended' | 'timeout' | 'idle' | 'aborted'; events: number; startedAt: number }
  | {
      reason: 'dropped' | 'expired' | 'error';
      events: number;
      startedAt: number;
      statusCode?: number;
      error?: unknown;
    };

interface WatchEventObject {
  metadata?: { resourceVersion?: string };
  code?: number;
  message?: string;
}

/**
 * A list+watch state machine on client-node's raw `Watch` (not `ListWatch`), after kube-runtime's watcher and
 * client-go's reflector:
 *
 * - paginated initial list (`pageSize`), then a watch from the list's resourceVersion with
 *   `allowWatchBookmarks=true` and a random `timeoutSeconds` in [min, 2·min);
 * - BOOKMARK only advances the resourceVersion;
 * - a normal end or an inactivity `TimeoutError` (see {@link RestartReason}) re-watches from the last resourceVersion
 *   at once;
 * - 410 Gone (ERROR event or response) relists;
 * - any other failure (network, 5xx, 403, list failure) backs off and retries: a watch from the last
 *   resourceVersion, or the list if that failed;
 * - nothing at all for `idleTimeoutMs` relists.
 *
 * It never stops by itself; only the AbortSignal ends it. Consumer exceptions are caught and logged.
 * One `run` (or `events`) at a time per instance: the instance holds the resourceVersion.
 */
export class Watcher<T extends KubernetesObject> {
  private readonly options: WatcherOptions<T>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly backoff: BackoffLike;
  private readonly idleTimeoutMs: number;
  private rv: string | undefined;
  private lastActivity = 0;
  /** Whether a list has completed (the first one may come from the watch cache; see `initialListFromCache`). */
  private listed = false;
  /** {@link WatcherOptions.resourceVersion}, until the first run used it. */
  private startFrom: string | undefined;

  constructor(options: WatcherOptions<T>) {
    this.options = options;
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ path: options.path });
    this.backoff = options.backoff ?? new Backoff({ clock: this.clock });
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.startFrom = options.resourceVersion;
  }

  /** The last resourceVersion seen (from a list, an event or a bookmark); `undefined` before the first list. */
  get resourceVersion(): string | undefined {
    return this.rv;
  }

  /**
   * Runs until `signal` aborts, calling `onEvent` synchronously for every event, in order. Resolves (never
   * rejects) once aborted; the open watch, if any, has been aborted by then.
   */
  async run(onEvent: (event: WatcherEvent<T>) => void, signal: AbortSignal): Promise<void> {
    const emit = (event: WatcherEvent<T>): void => {
      try {
        onEvent(event);
      } catch (e) {
        this.logger.error({ err: describeError(e), event: event.type }, 'Watcher event handler failed');
      }
    };
    let needList = true;
    if (this.startFrom !== undefined) {
      this.rv = this.startFrom;
      this.startFrom = undefined;
      this.lastActivity = this.clock.now();
      needList = false;
    }
    while (!signal.aborted) {
      if (needList) {
        try {
          await this.listAll(emit, signal);
          needList = false;
          this.backoff.reset();
        } catch (e) {
          if (signal.aborted) break;
          const code = statusCodeOf(e);
          if (
            !(await this.restart(
              {
                reason: 'list-failed',
                relist: true,
                delayMs: this.backoff.next(),
                error: e,
                ...(code === undefined ? {} : { statusCode: code }),
              },
              signal,
            ))
          )
            break;
        }
        continue;
      }
      if (this.clock.now() - this.lastActivity >= this.idleTimeoutMs) {
        needList = true;
        if (!(await this.restart({ reason: 'idle', relist: true, delayMs: 0 }, signal))) break;
        continue;
      }
      const end = await this.watchOnce(emit, signal);
      if (end.reason === 'aborted' || signal.aborted) break;
      if (end.events > 0) this.backoff.reset();
      let delayMs = 0;
      switch (end.reason) {
        case 'ended':
          if (end.events === 0 && this.clock.now() - end.startedAt < SHORT_WATCH_MS) delayMs = this.backoff.next();
          break;
        case 'timeout':
          break;
        case 'idle':
          needList = true;
          break;
        case 'expired':
          needList = true;
          if (end.events === 0) delayMs = this.backoff.next();
          break;
        case 'dropped':
          // A stream that worked for a while and then broke is routine (load balancers, restarts): re-watch at
          // once, as client-go does. Only a connection that fails straight away backs off.
          if (end.events === 0 && this.clock.now() - end.startedAt < SHORT_WATCH_MS) delayMs = this.backoff.next();
          else this.backoff.reset();
          break;
        case 'error':
          delayMs = this.backoff.next();
          break;
      }
      const restart: WatcherRestart = { reason: end.reason, relist: needList, delayMs };
      if ('statusCode' in end && end.statusCode !== undefined) restart.statusCode = end.statusCode;
      if ('error' in end && end.error !== undefined) restart.error = end.error;
      if (!(await this.restart(restart, signal))) break;
    }
  }

  /**
   * The events as an async iterable (buffered without bound; use {@link run} for a synchronous consumer).
   * Iteration ends when `signal` aborts or the consumer stops iterating.
   */
  events(signal: AbortSignal): AsyncIterable<WatcherEvent<T>> {
    return {
      [Symbol.asyncIterator]: (): AsyncIterator<WatcherEvent<T>> => {
        const stop = new AbortController();
        const onAbort = (): void => stop.abort(signal.reason);
        if (signal.aborted) stop.abort(signal.reason);
        else signal.addEventListener('abort', onAbort, { once: true });
        const buffer: WatcherEvent<T>[] = [];
        let wake: (() => void) | undefined;
        let finished = false;
        void this.run((e) => {
          buffer.push(e);
          wake?.();
        }, stop.signal).finally(() => {
          finished = true;
          signal.removeEventListener('abort', onAbort);
          wake?.();
        });
        stop.signal.addEventListener('abort', () => wake?.(), { once: true });
        const done = (): IteratorResult<WatcherEvent<T>> => ({ done: true, value: undefined });
        return {
          next: async () => {
            while (buffer.length === 0 && !finished && !stop.signal.aborted) {
              await new Promise<void>((resolve) => {
                wake = resolve;
              });
              wake = undefined;
            }
            const event = buffer.shift();
            return event === undefined || stop.signal.aborted ? done() : { done: false, value: event };
          },
          return: async () => {
            stop.abort();
            return done();
          },
        };
      },
    };
  }

  /** Reports a restart, then waits its delay. Returns false when aborted meanwhile. */
  private async restart(restart: WatcherRestart, signal: AbortSignal): Promise<boolean> {
    if (this.rv !== undefined && !restart.relist) restart.resourceVersion = this.rv;
    const fields: Record<string, unknown> = {
      reason: restart.reason,
      relist: restart.relist,
      delayMs: Math.round(restart.delayMs),
    };
    if (restart.statusCode !== undefined) fields.statusCode = restart.statusCode;
    if (restart.error !== undefined) fields.err = describeError(restart.error);
    if (restart.resourceVersion !== undefined) fields.resourceVersion = restart.resourceVersion;
    if (restart.statusCode === 403) this.logger.warn(fields, 'Watch forbidden, check RBAC; retrying');
    else if (restart.reason === 'ended' || restart.reason === 'timeout') this.logger.debug(fields, 'Restarting watch');
    else this.logger.info(fields, restart.relist ? 'Relisting' : 'Restarting watch');
    try {
      this.options.onRestart?.(restart);
    } catch (e) {
      this.logger.error({ err: describeError(e) }, 'Watcher onRestart callback failed');
    }
    if (restart.delayMs <= 0) return !signal.aborted;
    try {
      await sleep(this.clock, restart.delayMs, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Lists every page, framed by Init/InitDone. Throws on any failure (the caller backs off). */
  private async listAll(emit: (e: WatcherEvent<T>) => void, signal: AbortSignal): Promise<void> {
    const o = this.options;
    emit({ type: 'Init' });
    let token: string | undefined;
    let rv: string | undefined;
    const fromCache = o.initialListFromCache === true && !this.listed;
    do {
      const page = await o.list(
        {
          limit: o.pageSize ?? DEFAULT_PAGE_SIZE,
          ...(token === undefined ? {} : { continue: token }),
          ...(fromCache && token === undefined ? { resourceVersion: '0' } : {}),
          ...(o.labelSelector === undefined ? {} : { labelSelector: o.labelSelector }),
          ...(o.fieldSelector === undefined ? {} : { fieldSelector: o.fieldSelector }),
        },
        signal,
        (object) => {
          signal.throwIfAborted();
          emit({ type: 'InitApply', object });
        },
      );
      signal.throwIfAborted();
      for (const object of page.items) emit({ type: 'InitApply', object });
      // Every page of a paginated list carries the first page's (snapshot) resourceVersion.
      rv = page.metadata?.resourceVersion;
      token = page.metadata?._continue === '' ? undefined : page.metadata?._continue;
    } while (token !== undefined);
    if (rv === undefined || rv === '') throw new Error(`list of ${o.path} returned no resourceVersion`);
    this.rv = rv;
    this.listed = true;
    this.lastActivity = this.clock.now();
    emit({ type: 'InitDone', resourceVersion: rv });
  }

  /** One watch from the current resourceVersion, until it ends, fails, idles out or the signal aborts. */
  private watchOnce(emit: (e: WatcherEvent<T>) => void, signal: AbortSignal): Promise<WatchEnd> {
    const o = this.options;
    const startedAt = this.clock.now();
    const minTimeout = o.minWatchTimeoutSeconds ?? DEFAULT_MIN_WATCH_TIMEOUT_SECONDS;
    const query: Record<string, string | number | boolean | undefined> = {
      allowWatchBookmarks: true,
      resourceVersion: this.rv,
      timeoutSeconds: Math.floor(minTimeout * (1 + Math.random())),
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
    };
    return new Promise<WatchEnd>((resolve) => {
      let settled = false;
      let events = 0;
      let controller: AbortController | undefined;
      let idleTimer: { handle: TimerHandle } | undefined;
      /** The end to resolve with once the watch that was aborted has reported its own end. */
      let ending: WatchEnd | undefined;
      const finish = (end: WatchEnd): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        if (idleTimer !== undefined) this.clock.clearTimeout(idleTimer.handle);
        if (controller === undefined || end.reason !== 'aborted') {
          controller?.abort();
          resolve(end);
          return;
        }
        // A stop: the watch's connection is closed before the stop completes (its `done` comes once it is).
        ending = end;
        controller.abort();
      };
      const onAbort = (): void => finish({ reason: 'aborted', events, startedAt });
      const armIdle = (): void => {
        const remaining = this.lastActivity + this.idleTimeoutMs - this.clock.now();
        if (remaining <= 0) {
          finish({ reason: 'idle', events, startedAt });
          return;
        }
        idleTimer = { handle: this.clock.setTimeout(armIdle, remaining) };
      };
      const onEvent = (type: string, raw: unknown): void => {
        if (settled) return;
        this.lastActivity = this.clock.now();
        const obj = (raw ?? {}) as WatchEventObject;
        if (type === 'ERROR') {
          const code = typeof obj.code === 'number' ? obj.code : undefined;
          const error = new Error(`watch ERROR event: ${obj.message ?? 'no message'}`);
          finish(
            code === 410
              ? { reason: 'expired', events, startedAt, statusCode: 410, error }
              : { reason: 'error', events, startedAt, error, ...(code === undefined ? {} : { statusCode: code }) },
          );
          return;
        }
        const rv = obj.metadata?.resourceVersion;
        if (type === 'BOOKMARK') {
          events += 1;
          if (rv !== undefined && rv !== '') this.rv = rv;
          return;
        }
        if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') {
          this.logger.debug({ type }, 'Ignoring unknown watch event type');
          return;
        }
        if (rv === undefined || rv === '') {
          // As kube-runtime: an object without resourceVersion cannot be resumed from; start over.
          finish({ reason: 'expired', events, startedAt, error: new Error(`${type} event without resourceVersion`) });
          return;
        }
        events += 1;
        this.rv = rv;
        let object: T;
        try {
          object = o.decode === undefined ? (raw as T) : o.decode(raw);
        } catch (e) {
          this.logger.error({ err: describeError(e), type }, 'Cannot decode watch event object; skipping it');
          return;
        }
        emit(type === 'DELETED' ? { type: 'Delete', object } : { type: 'Apply', object });
      };
      const onDone = (err: unknown): void => {
        if (ending !== undefined) resolve(ending);
        if (settled) return;
        if (err === null || err === undefined) finish({ reason: 'ended', events, startedAt });
        else if (isWatchTimeout(err)) finish({ reason: 'timeout', events, startedAt });
        else {
          const code = statusCodeOf(err);
          if (code === 410) finish({ reason: 'expired', events, startedAt, statusCode: code, error: err });
          else if (code === undefined) finish({ reason: 'dropped', events, startedAt, error: err });
          else finish({ reason: 'error', events, startedAt, statusCode: code, error: err });
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      armIdle();
      if (settled) return;
      o.watch.watch(o.path, query, onEvent, onDone).then(
        (c) => {
          controller = c;
          // Stopped while the watch was starting: it ends now, without waiting for it.
          if (settled) c.abort();
        },
        // applySecurityAuthentication (e.g. an exec plugin) can throw before the request starts.
        (e: unknown) => onDone(e ?? new Error('watch failed to start')),
      );
    });
  }
}
