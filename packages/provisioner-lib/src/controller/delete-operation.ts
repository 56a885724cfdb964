import type { V1PersistentVolume } from '@kubernetes/client-node';
// By path: client-node's entry point loads every generated API and model.
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { describeError, isNotFound, toError } from '../client/api-errors.js';
import type { OperationContext } from './context.js';
import { failed, STOPPED, SUCCEEDED, type OperationOutcome } from './operation.js';
import { IgnoredError } from './provisioner.js';
import { desiredFinalizers, isProvisionerForVolume, removeFinalizer, shouldDelete } from './volumes.js';

/**
 * The Go library's `syncVolume`: ownership, the protection finalizer, then deletion when it is due. A failure of any
 * step is a `failed` outcome; only the deletion's own outcome is counted in the metrics and reported as
 * `deleteFailed`.
 */
export async function syncVolume(
  ctx: OperationContext,
  volume: V1PersistentVolume,
  signal: AbortSignal,
): Promise<OperationOutcome> {
  let pv: V1PersistentVolume;
  try {
    if (!isProvisionerForVolume(ctx.knownNames, volume)) return STOPPED;
    pv = await handleProtectionFinalizer(ctx, volume);
    if (!(await shouldDelete(ctx.provisioner, ctx.options.addFinalizer, pv, signal))) return STOPPED;
  } catch (err) {
    return failed(err);
  }
  const labels = { class: pv.spec?.storageClassName ?? '' };
  const started = ctx.options.clock.now();
  try {
    await deleteVolumeOperation(ctx, pv, signal);
  } catch (err) {
    ctx.metrics.deleteFailed(labels);
    ctx.reporter.emit('deleteFailed', pv, toError(err));
    return failed(err);
  }
  ctx.metrics.deleteSucceeded(labels, (ctx.options.clock.now() - started) / 1000);
  return SUCCEEDED;
}

/**
 * Writes a PV's finalizer list: a JSON merge patch of the whole list guarded by `resourceVersion`, so a concurrent
 * change is a conflict (retried), not a lost update. (Go sends a strategic merge patch computed from a diff.)
 */
function patchFinalizers(
  ctx: OperationContext,
  pv: V1PersistentVolume,
  finalizers: string[] | undefined,
): Promise<V1PersistentVolume> {
  return ctx.client.patchPersistentVolume(
    {
      name: pv.metadata?.name ?? '',
      body: { metadata: { finalizers: finalizers ?? null, resourceVersion: pv.metadata?.resourceVersion } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function handleProtectionFinalizer(ctx: OperationContext, pv: V1PersistentVolume): Promise<V1PersistentVolume> {
  const [finalizers, modified] = desiredFinalizers(ctx.options.addFinalizer, pv);
  if (!modified) return pv;
  try {
    return await patchFinalizers(ctx, pv, finalizers);
  } catch (err) {
    throw new Error(
      `failed to modify finalizers to ${JSON.stringify(finalizers ?? [])} on volume ${pv.metadata?.name ?? ''} err: ${describeError(err)}`,
      {
        cause: err,
      },
    );
  }
}

/** The Go library's `deleteVolumeOperation`: the asset, then the PV object, then our finalizer. */
async function deleteVolumeOperation(
  ctx: OperationContext,
  pv: V1PersistentVolume,
  signal: AbortSignal,
): Promise<void> {
  const name = pv.metadata?.name ?? '';
  const log = ctx.logger.child({ volume: name });
  try {
    await ctx.provisioner.delete(pv, signal);
  } catch (err) {
    if (err instanceof IgnoredError) {
      log.debug({ reason: err.reason }, 'Volume deletion ignored');
      return;
    }
    // A stopping controller (shutdown or lost leadership) interrupted the deletion: no Warning on the volume.
    if (signal.aborted) log.info({ err: describeError(err) }, 'Deletion interrupted: the controller is stopping');
    else ctx.reporter.volumeEvent(pv, 'Warning', 'VolumeFailedDelete', describeError(err));
    throw err;
  }
  log.info({}, 'Volume deleted');
  try {
    await ctx.client.deletePersistentVolume({ name });
  } catch (err) {
    log.error({ err: describeError(err) }, 'Failed to delete persistentvolume');
    throw err;
  }
  log.info({}, 'Persistentvolume deleted');
  ctx.reporter.emit('deleted', pv);
  if (!ctx.options.addFinalizer || (pv.metadata?.finalizers ?? []).length === 0) return;
  const cached = ctx.getVolume(name);
  if (cached === undefined) return;
  const [finalizers, modified] = removeFinalizer(cached.metadata?.finalizers);
  if (!modified) return;
  try {
    await patchFinalizers(ctx, cached, finalizers);
  } catch (err) {
    if (isNotFound(err)) return;
    log.error({ err: describeError(err) }, 'Failed to remove finalizer for persistentvolume');
    throw err;
  }
}
