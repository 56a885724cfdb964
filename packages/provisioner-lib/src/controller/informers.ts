import type { KubeConfig, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { informerFor, stripManagedFields } from '../cache/informer.js';
import type { Clock } from '../clock/clock.js';
import type { Logger } from '../logging/logger.js';

/** The controller's three caches, read by the workers. */
export interface ControllerInformers {
  claimByUid(uid: string): V1PersistentVolumeClaim | undefined;
  volumeByName(name: string): V1PersistentVolume | undefined;
  classByName(name: string): V1StorageClass | undefined;
  /** Resolves once all three have listed; rejects when `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<void>;
  /** Settles when all three have stopped. */
  done: Promise<void>;
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
 * Starts the claim, volume and class informers. As in the Go library, handlers only enqueue keys: claims by UID
 * on add and update, volumes by name on add and update (forgotten on delete); classes are a cache only.
 */
export function startInformers(kc: KubeConfig, signal: AbortSignal, hooks: InformerHooks): ControllerInformers {
  // Nothing in the controller reads managedFields: leaving them out of the caches saves about half their memory.
  const common = { resyncPeriodMs: hooks.resyncPeriodMs, clock: hooks.clock, transform: stripManagedFields };
  const claims = informerFor(kc, 'PersistentVolumeClaim', {
    ...common,
    logger: hooks.logger.child({ informer: 'claims' }),
    handlers: { add: (c) => hooks.onClaim(c), update: (_old, c) => hooks.onClaim(c) },
  });
  const volumes = informerFor(kc, 'PersistentVolume', {
    ...common,
    logger: hooks.logger.child({ informer: 'volumes' }),
    handlers: {
      add: (v) => hooks.onVolume(v),
      update: (_old, v) => hooks.onVolume(v),
      delete: (v) => hooks.onVolumeDeleted(v),
    },
  });
  const classes = informerFor(kc, 'StorageClass', { clock: hooks.clock, transform: stripManagedFields, logger: hooks.logger.child({ informer: 'classes' }) });
  const done = Promise.all([claims.run(signal), volumes.run(signal), classes.run(signal)]).then(() => undefined);
  return {
    claimByUid: (uid) => claims.store.byIndex('uid', uid)[0],
    volumeByName: (name) => volumes.store.get(name),
    classByName: (name) => classes.store.get(name),
    waitForSync: async (s) => {
      await Promise.all([claims.waitForSync(s), volumes.waitForSync(s), classes.waitForSync(s)]);
    },
    done,
  };
}
