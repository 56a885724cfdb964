/**
 * Upstream's `DiscoverLocalVolumes`: one pass over the discovery directory of every class, publishing each new disk
 * as a PV of this node.
 *
 * @module
 */
import type { CoreV1Api, V1Node, V1StorageClass } from '@kubernetes/client-node';
import {
  describeError,
  isAlreadyExists,
  withSignal,
  type Clock,
  type Logger,
  type Store,
} from '@kprov/provisioner-lib';
import type { ClassConfig, ProvisionerConfig, VolumeMode } from '../config/config.js';
import { nameMatcher } from '../config/glob.js';
import { VOLUME_FAILED_DELETE, type VolumeEvents } from '../events/volume-events.js';
import { readdir } from '../fs/async.js';
import { countedApiRequest } from '../metrics/api-requests.js';
import type { LocalStaticMetrics } from '../metrics/metrics.js';
import { capacityQuantity } from './capacity.js';
import { readMountPoints } from './mounts.js';
import { blockDeviceCapacity, filesystemCapacity, pathMode } from './probe.js';
import type { VolumeCache } from './volume-cache.js';
import { buildVolume, HOSTNAME_LABEL, volumeLabels } from './volume.js';
import { volumeName } from './volume-name.js';

/** `--discovery-period` default: 10 s. */
export const DEFAULT_DISCOVERY_PERIOD_MS = 10_000;

/**
 * What discovery asks of the cleanups (the deleter's): a volume being cleaned is not published again before it is
 * clean.
 */
export interface CleanupStatus {
  /**
   * Whether PV `name`'s volume is being cleaned; `byJob`: whether a cleanup Job would clean it (a block device with
   * `useJobForCleaning`), whose lookup may fail (then it counts as being cleaned).
   */
  isCleaning(name: string, byJob: boolean, signal: AbortSignal): Promise<boolean>;
  /** Forgets the finished cleanup of PV `name`, which is published again. @throws Error while it runs. */
  forget(name: string): void;
}

/** What a {@link Discoverer} works with. */
export interface DiscovererOptions {
  /** This node's name. */
  nodeName: string;
  /** Creates the PVs. */
  core: Pick<CoreV1Api, 'createPersistentVolume'>;
  /** The StorageClasses (their reclaim policy and mount options go onto the PVs). */
  classes: Store<V1StorageClass>;
  /** This node's PVs. */
  volumes: VolumeCache;
  /** The cleanups in progress. */
  cleanups: CleanupStatus;
  /** The config in force, asked at every pass. */
  config: () => ProvisionerConfig;
  /** The name PVs of this node carry in `pv.kubernetes.io/provisioned-by`. */
  provisionerName: () => string;
  /** Mount table read for the mount point rule. */
  mountInfoPath: string;
  /** Where sysfs is mounted, for block device sizes. */
  sysfsPath: string;
  metrics: LocalStaticMetrics;
  events: VolumeEvents;
  clock: Clock;
  logger: Logger;
}

/** A PV that cannot be published, with what upstream says. */
class DiscoveryError extends Error {}

/** Publishes the disks of the discovery directories as PVs of this node, one pass at a time. */
export class Discoverer {
  constructor(private readonly options: DiscovererOptions) {}

  /** One discovery pass over every class, for `node`; returns the errors (an empty list: ready). */
  async discover(node: V1Node, signal: AbortSignal): Promise<string[]> {
    const config = this.options.config();
    const errors: string[] = [];
    const labels = volumeLabels(node, config.nodeLabelsForPV, config.labelsForPV);
    for (const [className, cls] of Object.entries(config.storageClassMap)) {
      if (signal.aborted) break;
      try {
        errors.push(...(await this.discoverClass(node, className, cls, config, labels, signal)));
      } catch (err) {
        if (signal.aborted) break;
        errors.push(`${className}: ${describeError(err)}`);
      }
    }
    for (const error of errors) this.options.logger.error({ err: error }, 'Discovery error');
    return errors;
  }

  private async discoverClass(
    node: V1Node,
    className: string,
    cls: ClassConfig,
    config: ProvisionerConfig,
    labels: Record<string, string>,
    signal: AbortSignal,
  ): Promise<string[]> {
    const { nodeName, clock, logger, metrics } = this.options;
    const sc = this.options.classes.get(className);
    if (sc === undefined)
      throw new Error(
        `failed to get ReclaimPolicy from storage class "${className}": storageclass.storage.k8s.io "${className}" not found`,
      );
    const reclaimPolicy = sc.reclaimPolicy ?? 'Delete';
    if (reclaimPolicy !== 'Delete' && reclaimPolicy !== 'Retain')
      throw new Error(`unsupported reclaim policy ${reclaimPolicy} of storage class "${className}"`);
    let entries: string[];
    try {
      entries = (await readdir(cls.mountDir)).sort();
    } catch (err) {
      throw new Error(`error reading directory ${cls.mountDir}: ${describeError(err)}`, { cause: err });
    }
    const mounts = await readMountPoints(this.options.mountInfoPath);
    const matches = nameMatcher(cls.namePattern);
    const ours = this.options.volumes.list();
    const byName = new Map(ours.map((pv) => [pv.metadata?.name ?? '', pv]));
    const errors: string[] = [];
    const totals: Record<VolumeMode, bigint> = { Filesystem: 0n, Block: 0n };
    const mountDir = cls.mountDir.replace(/\/+$/, '');
    const hostDir = cls.hostDir.replace(/\/+$/, '');
    for (const entry of entries) {
      if (signal.aborted) break;
      if (!matches(entry)) {
        logger.debug({ entry, namePattern: cls.namePattern }, 'Skipping entry not matching namePattern');
        continue;
      }
      const started = clock.now();
      const path = `${mountDir}/${entry}`;
      const hostPath = `${hostDir}/${entry}`;
      let detected: VolumeMode;
      try {
        detected = await pathMode(path);
      } catch (err) {
        errors.push(describeError(err));
        continue;
      }
      const name = volumeName(entry, nodeName, className);
      const existing = byName.get(name);
      if (existing !== undefined) {
        if (existing.spec?.volumeMode === 'Block' && detected === 'Filesystem') {
          const message = `incorrect Volume Mode: PV ${name} requires block mode but path ${path} was in fs mode`;
          errors.push(message);
          this.options.events(existing, 'Warning', VOLUME_FAILED_DELETE, message);
        }
        continue;
      }
      const sameSpot = ours.find((pv) => pv.spec?.local?.path === hostPath);
      if (sameSpot !== undefined) {
        logger.error(
          { path: hostPath, pv: sameSpot.metadata?.name, wanted: name },
          'A PV exists for this path already; not creating another',
        );
        continue;
      }
      if (await this.options.cleanups.isCleaning(name, detected === 'Block' && config.useJobForCleaning, signal)) {
        logger.info({ pv: name }, 'PV is still being cleaned, not going to recreate it');
        continue;
      }
      try {
        this.options.cleanups.forget(name);
      } catch (err) {
        logger.error({ pv: name, err: describeError(err) }, 'Cannot remove the cleanup status');
        continue;
      }
      const mountOptions = sc.mountOptions ?? [];
      let bytes: bigint;
      try {
        if (detected === 'Block') {
          bytes = await blockDeviceCapacity(path, this.options.sysfsPath);
          if (cls.volumeMode === 'Block' && mountOptions.length > 0)
            logger.warn({ path, className }, 'StorageClass mountOptions are ignored for block volumes');
        } else {
          if (cls.volumeMode === 'Block')
            throw new DiscoveryError(`path "${path}" of filesystem mode cannot be used to create block volume`);
          if (!mounts.has(path))
            throw new DiscoveryError(`path "${path}" is not a valid mount point: it is not in the mount table`);
          bytes = await filesystemCapacity(path);
        }
      } catch (err) {
        errors.push(describeError(err));
        continue;
      }
      const body = buildVolume({
        name,
        hostPath,
        className,
        capacity: capacityQuantity(bytes),
        volumeMode: cls.volumeMode,
        accessMode: cls.accessMode,
        fsType: cls.fsType,
        reclaimPolicy,
        mountOptions,
        labels,
        provisionerName: this.options.provisionerName(),
        hostname: node.metadata!.labels![HOSTNAME_LABEL]!,
        selector: cls.selector,
        useAlphaAPI: config.useAlphaAPI,
        owner: config.setPVOwnerRef ? node : undefined,
      });
      try {
        const created = await countedApiRequest(metrics, clock, 'create', () =>
          this.options.core.createPersistentVolume({ body }, withSignal(signal)),
        );
        this.options.volumes.addCreated(created);
        byName.set(name, created);
        ours.push(created);
      } catch (err) {
        if (signal.aborted) throw err;
        errors.push(
          `error creating PV ${name} for path ${path}: ${isAlreadyExists(err) ? "it exists already and is not one of this node's" : describeError(err)}`,
        );
        continue;
      }
      totals[detected] += bytes;
      metrics.discovery.inc({ mode: cls.volumeMode });
      metrics.discoveryDuration.observe({ mode: cls.volumeMode }, (clock.now() - started) / 1000);
      logger.info(
        { pv: name, path: hostPath, capacity: body.spec?.capacity?.storage, mode: cls.volumeMode },
        'Created PV',
      );
    }
    metrics.capacity.set({ mode: 'Block' }, Number(totals.Block));
    metrics.capacity.set({ mode: 'Filesystem' }, Number(totals.Filesystem));
    return errors.map((e) => `${className}: ${e}`);
  }
}
