/**
 * Node mode's executor: one provisioner per node makes and removes its own node's volume directories in-process.
 * The checks of `node-dirs.ts` come first (the path guard of `volume/path-guard.ts`, as a helper pod's prologue: no
 * symbolic link below the base path), then the built-in behaviour (directory, owner, group and mode in-process) or
 * the configured script or command as a child process (`scripts.ts`), with `cmdTimeoutSeconds` as its limit. A setup
 * that fails or times out leaves no directory it made behind. A pending record (`pending.ts`) is kept from before the
 * directory is made until the PV is saved, for the orphan reconciler.
 *
 * @module
 */
import path from 'node:path';
import { describeError, realClock, silentLogger, type Clock, type Logger } from '@kprov/provisioner-lib';
import { DEFAULT_CMD_TIMEOUT_SECONDS, type Config } from '../../config/index.js';
import { guardVolumePath } from '../../volume/path-guard.js';
import { baseHolding, type VolumeDirectory, type VolumeExecutor, type VolumeSetup } from '../executor.js';
import type { VolumeAction } from '../script.js';
import { UnsavedVolumes } from '../unsaved.js';
import { runCommand } from './command-runner.js';
import { checkVolumeDirCreate, checkVolumeDirRemove, createVolumeDir, onHost, removeVolumeDir } from './node-dirs.js';
import { applyOwner } from './owner.js';
import { removePending, writePending } from './pending.js';
import { NodeScope } from './scope.js';
import { planScript, scriptCall, type NodeScripts } from './scripts.js';

/** Node mode: one provisioner per node, handling the claims scheduled to its node, without helper pods. */
export interface NodeModeOptions {
  /** The node this process runs on (`NODE_NAME` from the downward API's `spec.nodeName`). */
  readonly nodeName: string;
  /**
   * Where the node's root file system is seen by this process (e.g. `/host` for a hostPath of `/` mounted there);
   * `""` (default) when the base paths are mounted at the same paths.
   */
  readonly hostRoot?: string | undefined;
  /**
   * The ConfigMap's `setup` and `teardown` scripts now, run as child processes unless they are the stock ones
   * (`setupCommand`/`teardownCommand` of the config win, as in default mode). Default none: the built-in behaviour.
   */
  readonly scripts?: (() => NodeScripts | Promise<NodeScripts>) | undefined;
  /**
   * kuttiproject/provisioner-localvolume compatibility: volumes are `local` PVs, as kutti's, unless the claim's
   * `volumeType` or the class's `defaultVolumeType` annotation says otherwise; and the PVs kutti made on this node
   * (annotations `kuttiproject.org/provisionedBy` and `kuttiproject.org/provisionedOn`, folder `<base path>/<PV
   * name>`) are deleted too. Default false.
   */
  readonly kutti?: boolean | undefined;
}

/** Options of {@link NodeExecutor}. */
export interface NodeExecutorOptions extends NodeModeOptions {
  /** The current config (`setupCommand`, `teardownCommand`, `cmdTimeoutSeconds`). */
  readonly config: () => Config | undefined;
  /**
   * Where the scripts run, their output, and the directories or records that could not be removed are logged. Default:
   * nowhere.
   */
  readonly logger?: Logger | undefined;
  /** Time source of the commands' timeout and of the unsaved grace. Default the real clock. */
  readonly clock?: Clock | undefined;
}

/** The parent of a clean absolute path. */
function dirnameOf(p: string): string {
  return path.posix.dirname(p);
}

/** Makes and removes the volume directories of this node in-process; see the module. */
export class NodeExecutor implements VolumeExecutor {
  readonly scope: NodeScope;
  /** `--host-root` (`""`: none). */
  readonly hostRoot: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  /** PV name → the base path of its pending record, until the PV is saved. */
  private readonly unsaved: UnsavedVolumes<string>;
  /** PV names being set up or torn down now. */
  private readonly busy = new Set<string>();

  constructor(private readonly options: NodeExecutorOptions) {
    if (options.nodeName === '') throw new TypeError('NodeExecutor: nodeName must not be empty');
    this.scope = new NodeScope(options.nodeName, options.kutti ?? false);
    this.hostRoot = options.hostRoot ?? '';
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? realClock;
    this.unsaved = new UnsavedVolumes(this.clock);
  }

  isBusy(pvName: string): boolean {
    return this.busy.has(pvName) || this.unsaved.waiting(pvName);
  }

  /**
   * Makes the directory: checks, pending record, then the built-in behaviour or the setup script. On failure a
   * directory that did not exist before is removed again (with the teardown checks) and the record dropped.
   */
  async setUp(setup: VolumeSetup, signal: AbortSignal): Promise<void> {
    try {
      await this.make(setup, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`failed to create volume ${setup.pvName}: ${describeError(err)}`, { cause: err });
    }
  }

  private async make(setup: VolumeSetup, signal: AbortSignal): Promise<void> {
    const { hostRoot } = this;
    const { pvName } = setup;
    // An unsafe pattern may leave the base path: then the parent is the base, as the setup script takes it.
    const dirBase = baseHolding(setup.path, setup.basePath) ?? dirnameOf(setup.path);
    const existed = await checkVolumeDirCreate(hostRoot, dirBase, setup.path);
    this.busy.add(pvName);
    try {
      const { claim, path: dir, basePath, node, storageClassName } = setup;
      await writePending(hostRoot, { pvName, claim, path: dir, basePath, node, storageClassName });
      const scripts = (await this.options.scripts?.()) ?? {};
      const call = scriptCall({ ...setup, action: 'create', hostRoot, basePath: dirBase });
      const plan = planScript('create', this.options.config()?.setupCommand, scripts.setup, call.args);
      try {
        if (plan.kind === 'builtin') {
          await createVolumeDir(hostRoot, dirBase, dir);
          await applyOwner(hostRoot, onHost(hostRoot, dir), {
            user: setup.user ?? '',
            group: setup.group ?? '',
            perm: setup.perm ?? '',
          });
        } else await this.runScript('create', pvName, plan.what, plan.argv, call.env, signal);
        // Walked again, as the prologue does after a setup: a component swapped for a link meanwhile fails it.
        await guardVolumePath({ hostRoot, base: dirBase, dir });
      } catch (err) {
        await this.undoSetUp(setup, dirBase, existed);
        throw err;
      }
      this.unsaved.add(pvName, basePath);
    } finally {
      this.busy.delete(pvName);
    }
  }

  /** After a failed setup: the directory goes unless it existed before, then the record. Failures are logged. */
  private async undoSetUp(setup: VolumeSetup, dirBase: string, existed: boolean): Promise<void> {
    try {
      if (!existed) await removeVolumeDir(this.hostRoot, dirBase, setup.path);
      await removePending(this.hostRoot, setup.basePath, setup.pvName);
    } catch (err) {
      this.logger.warn(
        { pv: setup.pvName, err: describeError(err) },
        `Could not remove the directory ${setup.path} of the failed setup; the reconciler will`,
      );
    }
  }

  /** The PV of a volume set up here was saved: its pending record goes. */
  async saved(pvName: string): Promise<void> {
    const basePath = this.unsaved.take(pvName);
    if (basePath !== undefined) await this.forget(pvName, basePath);
  }

  /** Drops the pending record of `pvName` in `basePath` (the record's base path); failures are logged. */
  async forget(pvName: string, basePath: string): Promise<void> {
    try {
      await removePending(this.hostRoot, basePath, pvName);
    } catch (err) {
      this.logger.warn({ pv: pvName, err: describeError(err) }, `Could not remove the pending record of ${pvName}`);
    }
  }

  /**
   * Removes the directory: the link checks, then the built-in behaviour or the teardown script; then its pending
   * record, if any. A failure is thrown (the PV is kept and the deletion retried).
   */
  async tearDown(teardown: VolumeDirectory, signal: AbortSignal): Promise<void> {
    const { hostRoot } = this;
    const { pvName, basePath } = teardown;
    this.busy.add(pvName);
    try {
      await checkVolumeDirRemove(hostRoot, basePath, teardown.path);
      const scripts = (await this.options.scripts?.()) ?? {};
      const call = scriptCall({ ...teardown, action: 'delete', hostRoot });
      const plan = planScript('delete', this.options.config()?.teardownCommand, scripts.teardown, call.args);
      if (plan.kind === 'builtin') await removeVolumeDir(hostRoot, basePath, teardown.path);
      else await this.runScript('delete', pvName, plan.what, plan.argv, call.env, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      throw new Error(`failed to delete volume ${pvName}: ${describeError(err)}`, { cause: err });
    } finally {
      this.busy.delete(pvName);
    }
    await this.forget(pvName, basePath);
  }

  private runScript(
    action: VolumeAction,
    pvName: string,
    what: string,
    argv: readonly string[],
    env: Readonly<Record<string, string>>,
    signal: AbortSignal,
  ): Promise<void> {
    this.logger.info({ pv: pvName }, `Running ${what} for volume ${pvName}`);
    return runCommand({
      argv,
      env,
      timeoutSeconds: this.options.config()?.cmdTimeoutSeconds ?? DEFAULT_CMD_TIMEOUT_SECONDS,
      action,
      signal,
      logger: this.logger.child({ pv: pvName }),
      clock: this.clock,
    });
  }
}
