/**
 * The provisioner's configuration: the keys of upstream's ConfigMap, their defaults, and their validation.
 *
 * @module
 */
import type { V1NodeSelectorTerm, V1Toleration } from '@kubernetes/client-node';
import { parseGoDuration } from '@kprov/provisioner-lib/runtime';
import { canonicalKeys, noticeMessage } from './field-names.js';
import { BadPatternError, nameMatcher } from './glob.js';

/** A volume's mode, as `spec.volumeMode` names it. */
export type VolumeMode = 'Filesystem' | 'Block';

/** Where the ConfigMap is mounted in upstream's DaemonSet: one file per key. */
export const DEFAULT_CONFIG_DIR = '/etc/provisioner/config';
/** `blockCleanerCommand` when a class does not set it. */
export const DEFAULT_BLOCK_CLEANER_COMMAND: readonly string[] = ['/scripts/quick_reset.sh'];
/** `minResyncPeriod` when not set: 5 minutes. */
export const DEFAULT_MIN_RESYNC_PERIOD_MS = 5 * 60_000;
/** `cleanupTimeout` of a class when not set: 24 hours (a kprov addition; upstream never stops a cleaner). */
export const DEFAULT_CLEANUP_TIMEOUT_MS = 24 * 3_600_000;

/** One entry of `storageClassMap`: a discovery directory and how its volumes are published and cleaned. */
export interface ClassConfig {
  /** `hostDir`: the discovery directory on the host; PV paths are `hostDir/<entry>`. Required. */
  hostDir: string;
  /** `mountDir`: where `hostDir` is mounted in the provisioner's container; every file access goes there. Required. */
  mountDir: string;
  /** `blockCleanerCommand`: argv of the cleaner of block volumes. Default `["/scripts/quick_reset.sh"]`. */
  blockCleanerCommand: string[];
  /** `volumeMode` of the PVs. Default `Filesystem`. */
  volumeMode: VolumeMode;
  /** `fsType`: `spec.local.fsType` of the PVs. Default none. */
  fsType?: string | undefined;
  /** `namePattern`: comma-separated globs an entry name must match. Default `*`. */
  namePattern: string;
  /** `selector`: node selector terms added to the PVs' node affinity (ORed with the node's own term). Default none. */
  selector: V1NodeSelectorTerm[];
  /** `accessMode` of the PVs. Default `ReadWriteOnce`. */
  accessMode: string;
  /**
   * `cleanupTimeout` (kprov): how long one cleanup of a volume may run before it is stopped and reported as failed,
   * in ms. Default {@link DEFAULT_CLEANUP_TIMEOUT_MS} (24 h).
   */
  cleanupTimeoutMs: number;
}

/** The whole configuration, with every default filled in. */
export interface ProvisionerConfig {
  /** `storageClassMap`: discovery directories by StorageClass name. Default empty (nothing is discovered). */
  storageClassMap: Record<string, ClassConfig>;
  /** `nodeLabelsForPV`: Node label keys copied onto new PVs (when the Node has them). Default none. */
  nodeLabelsForPV: string[];
  /** `labelsForPV`: labels put on new PVs (after the node's, so they win). Default none. */
  labelsForPV: Record<string, string>;
  /**
   * `useAlphaAPI`: node affinity in the alpha annotation `volume.alpha.kubernetes.io/node-affinity` as well (upstream:
   * instead of `spec.nodeAffinity`, which API servers since 1.10 require). Default false.
   */
  useAlphaAPI: boolean;
  /** `useJobForCleaning`: clean block volumes with a Job instead of a process. Default false. */
  useJobForCleaning: boolean;
  /** `jobTolerations`: tolerations of the cleanup Jobs' pods. Default none. */
  jobTolerations: V1Toleration[];
  /** `minResyncPeriod`: informer resync between it and twice it, in ms. Default 5 min. */
  minResyncPeriodMs: number;
  /** `useNodeNameOnly`: provisioner name without the node's UID. Default false. */
  useNodeNameOnly: boolean;
  /** `setPVOwnerRef`: new PVs are owned by the Node (garbage-collected with it). Default false. */
  setPVOwnerRef: boolean;
  /** `removeNodeNotReadyTaint`: remove the startup taint from the Node once ready. Default false. */
  removeNodeNotReadyTaint: boolean;
  /** `provisionerNotReadyNodeTaintKey`: key of that taint. Default `""`. */
  provisionerNotReadyNodeTaintKey: string;
}

/** A configuration with nothing in it: every default. */
export function emptyConfig(): ProvisionerConfig {
  return {
    storageClassMap: {},
    nodeLabelsForPV: [],
    labelsForPV: {},
    useAlphaAPI: false,
    useJobForCleaning: false,
    jobTolerations: [],
    minResyncPeriodMs: DEFAULT_MIN_RESYNC_PERIOD_MS,
    useNodeNameOnly: false,
    setPVOwnerRef: false,
    removeNodeNotReadyTaint: false,
    provisionerNotReadyNodeTaintKey: '',
  };
}

/** What {@link buildConfig} made of the keys: the config in force, and a message for every key or class it could not use. */
export interface BuiltConfig {
  config: ProvisionerConfig;
  /** One line per refused key or class; the key keeps its default and the class is left out. */
  errors: string[];
  /**
   * One line per key spelled otherwise than the config names it (read all the same, as upstream reads it), and per
   * field set by several spellings (the last in the byte order of the spellings wins, as upstream's).
   */
  warnings: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function duration(value: unknown, what: string): number {
  const ms = typeof value === 'string' ? parseGoDuration(value) : undefined;
  if (ms === undefined) throw new Error(`${what}: invalid duration ${JSON.stringify(value)}`);
  return ms;
}

function stringList(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new Error(`${what}: must be a list of strings`);
  return value;
}

function optionalString(value: unknown, what: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`${what}: must be a string`);
  return value;
}

/** One `storageClassMap` entry, validated as upstream validates it, with its defaults filled in. */
export function buildClassConfig(name: string, raw: unknown): ClassConfig {
  if (!isRecord(raw)) throw new Error(`Storage Class ${name} is misconfigured: not a map`);
  const hostDir = optionalString(raw.hostDir, `Storage Class ${name}: hostDir`) ?? '';
  const mountDir = optionalString(raw.mountDir, `Storage Class ${name}: mountDir`) ?? '';
  if (hostDir === '' || mountDir === '')
    throw new Error(`Storage Class ${name} is misconfigured, missing HostDir or MountDir parameter`);
  if (!hostDir.startsWith('/') || !mountDir.startsWith('/'))
    throw new Error(`Storage Class ${name} is misconfigured: hostDir and mountDir must be absolute paths`);
  let blockCleanerCommand = [...DEFAULT_BLOCK_CLEANER_COMMAND];
  if (raw.blockCleanerCommand !== undefined && raw.blockCleanerCommand !== null) {
    blockCleanerCommand = stringList(raw.blockCleanerCommand, `Storage Class ${name}: blockCleanerCommand`);
    if (blockCleanerCommand.length === 0) throw new Error(`Invalid empty block cleaner command for class ${name}`);
  }
  const volumeMode = optionalString(raw.volumeMode, `Storage Class ${name}: volumeMode`) ?? 'Filesystem';
  if (volumeMode !== 'Filesystem' && volumeMode !== 'Block') throw new Error(`unsupported volume mode ${volumeMode}`);
  const namePattern = optionalString(raw.namePattern, `Storage Class ${name}: namePattern`) ?? '';
  try {
    nameMatcher(namePattern === '' ? '*' : namePattern);
  } catch (err) {
    if (err instanceof BadPatternError)
      throw new Error(`Storage Class ${name}: invalid namePattern: ${err.message}`, { cause: err });
    throw err;
  }
  let selector: V1NodeSelectorTerm[] = [];
  if (raw.selector !== undefined && raw.selector !== null) {
    if (!Array.isArray(raw.selector) || !raw.selector.every(isRecord))
      throw new Error(`Storage Class ${name}: selector must be a list of node selector terms`);
    selector = raw.selector;
  }
  const fsType = optionalString(raw.fsType, `Storage Class ${name}: fsType`);
  return {
    hostDir,
    mountDir,
    blockCleanerCommand,
    volumeMode,
    ...(fsType === undefined || fsType === '' ? {} : { fsType }),
    namePattern: namePattern === '' ? '*' : namePattern,
    selector,
    accessMode: optionalString(raw.accessMode, `Storage Class ${name}: accessMode`) || 'ReadWriteOnce',
    cleanupTimeoutMs:
      raw.cleanupTimeout === undefined || raw.cleanupTimeout === null
        ? DEFAULT_CLEANUP_TIMEOUT_MS
        : duration(raw.cleanupTimeout, `Storage Class ${name}: cleanupTimeout`),
  };
}

type TopLevel = Exclude<keyof ProvisionerConfig, 'storageClassMap' | 'minResyncPeriodMs'>;

/** Readers of the top-level keys other than `storageClassMap` and `minResyncPeriod`. */
const KEYS: { [K in TopLevel]: (v: unknown) => ProvisionerConfig[K] } = {
  nodeLabelsForPV: (v) => stringList(v, 'nodeLabelsForPV'),
  labelsForPV: (v) => {
    if (!isRecord(v) || !Object.values(v).every((x) => typeof x === 'string'))
      throw new Error('labelsForPV: must be a map of strings');
    return v as Record<string, string>;
  },
  useAlphaAPI: (v) => boolean(v, 'useAlphaAPI'),
  useJobForCleaning: (v) => boolean(v, 'useJobForCleaning'),
  jobTolerations: (v) => {
    if (!Array.isArray(v) || !v.every(isRecord)) throw new Error('jobTolerations: must be a list of tolerations');
    return v;
  },
  useNodeNameOnly: (v) => boolean(v, 'useNodeNameOnly'),
  setPVOwnerRef: (v) => boolean(v, 'setPVOwnerRef'),
  removeNodeNotReadyTaint: (v) => boolean(v, 'removeNodeNotReadyTaint'),
  provisionerNotReadyNodeTaintKey: (v) => optionalString(v, 'provisionerNotReadyNodeTaintKey') ?? '',
};

function boolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw new Error(`${what}: must be true or false, not ${JSON.stringify(value)}`);
  return value;
}

/**
 * The config from the ConfigMap's keys, each already parsed as YAML (`null` for an empty value). Keys are matched as
 * upstream's decoder matches them: exactly, else case-insensitively (`hostdir` is `hostDir`), at every level, each
 * other spelling reported in `warnings`. Unknown keys are ignored, as upstream's non-strict parsing ignores them. A key
 * or class that cannot be used is reported in `errors`: a top-level key keeps its default, a class is left out;
 * everything else applies.
 */
export function buildConfig(raw: Readonly<Record<string, unknown>>): BuiltConfig {
  const { keys, notices } = canonicalKeys(raw);
  const warnings = notices.map(noticeMessage);
  const config = emptyConfig();
  const errors: string[] = [];
  const attempt = (fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      errors.push((err as Error).message);
    }
  };
  for (const key of Object.keys(KEYS) as TopLevel[]) {
    const value = keys[key];
    if (value === undefined || value === null) continue;
    attempt(() => {
      (config as unknown as Record<string, unknown>)[key] = KEYS[key](value);
    });
  }
  const resync = keys.minResyncPeriod;
  if (resync !== undefined && resync !== null)
    attempt(() => (config.minResyncPeriodMs = duration(resync, 'minResyncPeriod')));
  const classes = keys.storageClassMap;
  if (classes !== undefined && classes !== null) {
    if (!isRecord(classes)) errors.push('storageClassMap: must be a map of class names to their settings');
    else {
      for (const [name, raw] of Object.entries(classes))
        attempt(() => (config.storageClassMap[name] = buildClassConfig(name, raw)));
    }
  }
  return { config, errors, warnings };
}
