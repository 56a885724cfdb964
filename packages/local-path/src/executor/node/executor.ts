/**
 * Node mode's setup and teardown of a volume directory on its own node: the checks of `node-dirs.ts` first (the path
 * guard of `volume/path-guard.ts`, as a helper pod's prologue: no symbolic link below the base path), then the
 * built-in behaviour (directory, owner, group and mode in-process) or the configured script or command as a child
 * process (`scripts.ts`), with `cmdTimeoutSeconds` as its limit. A setup that fails or times out leaves no directory
 * it made behind. A pending record (`pending.ts`) is kept from before the directory is made until the PV is saved,
 * for the orphan reconciler.
 *
 * @module
 */
import { describeError, silentLogger, type Logger } from '@kprov/provisioner-lib';
import { DEFAULT_CMD_TIMEOUT_SECONDS, type Config } from '../../config/index.js';
import { runCommand } from './command-runner.js';
import { checkVolumeDirCreate, checkVolumeDirRemove, createVolumeDir, onHost, removeVolumeDir } from './node-dirs.js';
import { applyOwner, type OwnerValues } from './owner.js';
import { guardVolumePath } from '../../volume/path-guard.js';
import { removePending, writePending, type PendingRecord } from './pending.js';
import { planScript, scriptCall, type NodeScripts } from './scripts.js';

/** How long a volume set up by this process may wait for its PV to be saved before the reconciler may act. */
const UNSAVED_GRACE_MS = 10 * 60_000;

/** Options of {@link NodeVolumes}. */
export interface NodeVolumesOptions {
  /** `--host-root` (`""`: none). */
  readonly hostRoot: string;
  /** The current config (`setupCommand`, `teardownCommand`, `cmdTimeoutSeconds`). */
  readonly config: () => Config | undefined;
  /** The ConfigMap's `setup` and `teardown` scripts now; none: the built-in behaviour. */
  readonly scripts?: (() => NodeScripts | Promise<NodeScripts>) | undefined;
  readonly logger?: Logger | undefined;
}

/** A directory to set up. */
export interface NodeSetup extends OwnerValues {
  /** What the pending record holds; `record.basePath` is the config's base path the volume was made in. */
  readonly record: PendingRecord;
  /** The directory the volume lies below (the base path, or the parent of an unsafe pattern's path). */
  readonly dirBase: string;
  readonly sizeBytes: number | bigint;
  readonly volumeMode: string;
}

/** A directory to tear down. */
export interface NodeTeardown {
  readonly pvName: string;
  readonly path: string;
  /** The base path the teardown checks returned. */
  readonly basePath: string;
  readonly sizeBytes: number | bigint;
  readonly volumeMode: string;
}

/** Sets up and tears down volume directories of this node; see the module. */
export class NodeVolumes {
  private readonly logger: Logger;
  /** PV name → the base path of its record and since when (ms) it waits for the PV to be saved. */
  private readonly unsaved = new Map<string, { basePath: string; since: number }>();
  /** PV names being set up or torn down now. */
  private readonly busy = new Set<string>();

  constructor(private readonly options: NodeVolumesOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Whether an operation of this process is on the volume, or its PV is waiting to be saved (the reconciler waits). */
  isBusy(pvName: string): boolean {
    if (this.busy.has(pvName)) return true;
    const entry = this.unsaved.get(pvName);
    if (entry === undefined) return false;
    if (Date.now() - entry.since < UNSAVED_GRACE_MS) return true;
    this.unsaved.delete(pvName);
    return false;
  }

  private timeoutSeconds(): number {
    return this.options.config()?.cmdTimeoutSeconds ?? DEFAULT_CMD_TIMEOUT_SECONDS;
  }

  /**
   * Makes the directory: checks, pending record, then the built-in behaviour or the setup script. On failure a
   * directory that did not exist before is removed again (with the teardown checks) and the record dropped.
   */
  async setUp(setup: NodeSetup, signal: AbortSignal): Promise<void> {
    const { hostRoot } = this.options;
    const { record, dirBase } = setup;
    const existed = await checkVolumeDirCreate(hostRoot, dirBase, record.path);
    this.busy.add(record.pvName);
    try {
      await writePending(hostRoot, record);
      const config = this.options.config();
      const scripts = (await this.options.scripts?.()) ?? {};
      const call = scriptCall({ action: 'create', hostRoot, path: record.path, basePath: dirBase, ...setup });
      const plan = planScript('create', config?.setupCommand, scripts.setup, call.args);
      try {
        if (plan.kind === 'builtin') {
          await createVolumeDir(hostRoot, dirBase, record.path);
          await applyOwner(hostRoot, onHost(hostRoot, record.path), setup);
        } else {
          this.logger.info({ pv: record.pvName }, `Running ${plan.what} for volume ${record.pvName}`);
          await runCommand({
            argv: plan.argv,
            env: call.env,
            timeoutSeconds: this.timeoutSeconds(),
            action: 'create',
            signal,
            logger: this.logger.child({ pv: record.pvName }),
          });
        }
        // Walked again, as the prologue does after a setup: a component swapped for a link meanwhile fails it.
        await guardVolumePath({ hostRoot, base: dirBase, dir: record.path });
      } catch (err) {
        await this.undoSetUp(setup, existed);
        throw err;
      }
      this.unsaved.set(record.pvName, { basePath: record.basePath, since: Date.now() });
    } finally {
      this.busy.delete(record.pvName);
    }
  }

  /** After a failed setup: the directory goes unless it existed before, then the record. Failures are logged. */
  private async undoSetUp(setup: NodeSetup, existed: boolean): Promise<void> {
    const { hostRoot } = this.options;
    const { record } = setup;
    try {
      if (!existed) await removeVolumeDir(hostRoot, setup.dirBase, record.path);
      await removePending(hostRoot, record.basePath, record.pvName);
    } catch (err) {
      this.logger.warn(
        { pv: record.pvName, err: describeError(err) },
        `Could not remove the directory ${record.path} of the failed setup; the reconciler will`,
      );
    }
  }

  /** The PV of a volume set up here was saved: its pending record goes. */
  async saved(pvName: string): Promise<void> {
    const entry = this.unsaved.get(pvName);
    if (entry === undefined) return;
    this.unsaved.delete(pvName);
    await this.forget(pvName, entry.basePath);
  }

  /** Drops the pending record of `pvName` in `basePath` (the record's base path); failures are logged. */
  async forget(pvName: string, basePath: string): Promise<void> {
    try {
      await removePending(this.options.hostRoot, basePath, pvName);
    } catch (err) {
      this.logger.warn({ pv: pvName, err: describeError(err) }, `Could not remove the pending record of ${pvName}`);
    }
  }

  /**
   * Removes the directory: the link checks, then the built-in behaviour or the teardown script. A failure is thrown
   * (the PV is kept and the deletion retried).
   */
  async tearDown(teardown: NodeTeardown, signal: AbortSignal): Promise<void> {
    const { hostRoot } = this.options;
    this.busy.add(teardown.pvName);
    try {
      await checkVolumeDirRemove(hostRoot, teardown.basePath, teardown.path);
      const config = this.options.config();
      const scripts = (await this.options.scripts?.()) ?? {};
      const call = scriptCall({ action: 'delete', hostRoot, ...teardown });
      const plan = planScript('delete', config?.teardownCommand, scripts.teardown, call.args);
      if (plan.kind === 'builtin') {
        await removeVolumeDir(hostRoot, teardown.basePath, teardown.path);
        return;
      }
      this.logger.info({ pv: teardown.pvName }, `Running ${plan.what} for volume ${teardown.pvName}`);
      await runCommand({
        argv: plan.argv,
        env: call.env,
        timeoutSeconds: this.timeoutSeconds(),
        action: 'delete',
        signal,
        logger: this.logger.child({ pv: teardown.pvName }),
      });
    } finally {
      this.busy.delete(teardown.pvName);
    }
  }
}
