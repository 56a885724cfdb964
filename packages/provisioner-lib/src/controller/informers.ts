import type {
  KubeConfig,
  KubernetesObject,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import { informerFor, type EventHandler, type Informer } from '../cache/informer.js';
import { InternTable } from '../cache/intern-table.js';
import { shareWithClaim, shareWithVolume } from '../cache/share-references.js';
import { shareRepeatedValues } from '../cache/share-values.js';
import type { Store } from '../cache/store.js';
import type { Clock } from '../clock/clock.js';
import type { Logger } from '../logging/logger.js';

/** The controller's three caches, read by the workers. */
export interface ControllerInformers {
  claimByUid(uid: string): V1PersistentVolumeClaim | undefined;
  volumeByName(name: string): V1PersistentVolume | undefined;
  classByName(name: string): V1StorageClass | undefined;
  /** Resolves once all three have listed; rejects when `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<void>;
  /** Settles when the controller's own informers have stopped and its handlers are off the injected ones. */
  done: Promise<void>;
}

/** Informers the embedding program runs and shares with the controller. */
export interface InjectedInformers {
  claims?: Informer<V1PersistentVolumeClaim> | undefined;
  volumes?: Informer<V1PersistentVolume> | undefined;
  classes?: Informer<V1StorageClass> | undefined;
}

export interface InformerHooks {
  resyncPeriodMs: number;
  clock: Clock;
  logger: Logger;
  /** Claim added or updated (including resyncs). */
  onClaim(claim: V1PersistentVolumeClaim): void;
  /** Volume added or updated (including resyncs). */
  onVolume(volume: V1PersistentVolume): void;
  /** Volume deleted. */
  onVolumeDeleted(volume: V1PersistentVolume): void;
}

/**
 * Adds `handler` to `informer` until `signal` aborts. On an informer that has listed already, every cached object is
 * handed to `add` first, as client-go's `AddEventHandler` replays the cache to a handler added late (the work queues
 * drop the duplicates of objects that also come through the handler).
 */
function attach<T extends KubernetesObject>(
  informer: Informer<T>,
  handler: EventHandler<T>,
  signal: AbortSignal,
): Promise<void> {
  const remove = informer.addEventHandler(handler);
  if (handler.add !== undefined) for (const object of informer.store.list()) handler.add(object);
  return new Promise((resolve) => {
    if (signal.aborted) {
      remove();
      resolve();
      return;
    }
    signal.addEventListener(
      'abort',
      () => {
        remove();
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Starts the claim, volume and class informers, or takes the injected ones. As in the Go library, handlers only
 * enqueue keys: claims by UID on add and update, volumes by name on add and update (forgotten on delete); classes
 * are a cache only. The controller's own informers run until `signal` aborts; injected ones are their owner's to
 * run and stop, and lose the controller's handlers when `signal` aborts.
 */
export function startInformers(
  kc: KubeConfig,
  signal: AbortSignal,
  hooks: InformerHooks,
  injected: InjectedInformers = {},
): ControllerInformers {
  // Nothing in the controller reads managedFields: left out as objects are read (a list's are never parsed), which
  // saves about half the caches' memory and of a start's parsing.
  // Values that repeat across objects (class and provisioner names, access modes, …) are kept once, in a table the
  // three caches share (a claim and its volume name the same class), and a bound claim and volume share the strings
  // they repeat of each other. The first lists come from the API server's watch cache, as client-go's informers' do.
  const table = new InternTable();
  const compact = <T extends KubernetesObject>(object: T): T => shareRepeatedValues(object, table);
  // Set once the informers exist; the transforms run only once they do. An injected claims informer may lack the
  // `uid` index that shareWithClaim looks claims up by.
  const peers: { claims?: Store<V1PersistentVolumeClaim>; volumes?: Store<V1PersistentVolume> } = {};
  const common = {
    resyncPeriodMs: hooks.resyncPeriodMs,
    clock: hooks.clock,
    initialListFromCache: true,
    stripManagedFields: true,
  };
  const running: Promise<void>[] = [];
  const claims =
    injected.claims ??
    informerFor(kc, 'PersistentVolumeClaim', {
      ...common,
      transform: (claim) => shareWithVolume(compact(claim), peers.volumes),
      logger: hooks.logger.child({ informer: 'claims' }),
    });
  const volumes =
    injected.volumes ??
    informerFor(kc, 'PersistentVolume', {
      ...common,
      transform: (volume) => shareWithClaim(compact(volume), peers.claims),
      logger: hooks.logger.child({ informer: 'volumes' }),
    });
  const classes =
    injected.classes ??
    informerFor(kc, 'StorageClass', {
      clock: hooks.clock,
      transform: compact,
      initialListFromCache: true,
      stripManagedFields: true,
      logger: hooks.logger.child({ informer: 'classes' }),
    });
  if (injected.claims === undefined) peers.claims = claims.store;
  peers.volumes = volumes.store;
  running.push(
    attach(claims, { add: (c) => hooks.onClaim(c), update: (_old, c) => hooks.onClaim(c) }, signal),
    attach(
      volumes,
      {
        add: (v) => hooks.onVolume(v),
        update: (_old, v) => hooks.onVolume(v),
        delete: (v) => hooks.onVolumeDeleted(v),
      },
      signal,
    ),
  );
  if (injected.claims === undefined) running.push(claims.run(signal));
  if (injected.volumes === undefined) running.push(volumes.run(signal));
  if (injected.classes === undefined) running.push(classes.run(signal));
  return {
    claimByUid: (uid) => claims.store.byIndex('uid', uid)[0],
    volumeByName: (name) => volumes.store.get(name),
    classByName: (name) => classes.store.get(name),
    waitForSync: async (s) => {
      await Promise.all([claims.waitForSync(s), volumes.waitForSync(s), classes.waitForSync(s)]);
    },
    done: Promise.all(running).then(() => undefined),
  };
}
