import type { V1PersistentVolume } from '@kubernetes/client-node';
// By path: client-node's entry point loads every generated API and model.
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import { describeError, isNotFound, toError } from '../client/api-errors.js';
import { FINALIZER_PV } from './annotations.js';
import type { OperationContext } from './context.js';
import { controllerStopping, failed, STOPPED, SUCCEEDED, type OperationOutcome } from './operation.js';
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
  if (ctx.deletedVolumes.has(volume.metadata?.uid ?? '')) return STOPPED;
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
 * Adds our finalizer to a PV or takes it off, as the Go library does since v10.0.1: a strategic merge patch that
 * names only our finalizer (`finalizers` is a merge list: the server adds it to, or deletes it from, the list as it is
 * then) and carries no `resourceVersion`. So a change made meanwhile (kube-controller-manager taking its
 * `kubernetes.io/pv-protection` off a PV being deleted, another finalizer added), or a cached copy that has not yet
 * seen the PV's deletion, is no conflict, and the deletion is not done twice for one.
 */
function patchFinalizer(ctx: OperationContext, name: string, change: 'add' | 'remove'): Promise<V1PersistentVolume> {
  const metadata =
    change === 'add' ? { finalizers: [FINALIZER_PV] } : { '$deleteFromPrimitiveList/finalizers': [FINALIZER_PV] };
  return ctx.client.patchPersistentVolume(
    { name, body: { metadata } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

async function handleProtectionFinalizer(ctx: OperationContext, pv: V1PersistentVolume): Promise<V1PersistentVolume> {
  const [finalizers, modified] = desiredFinalizers(ctx.options.addFinalizer, pv);
  if (!modified) return pv;
  const adds = (finalizers ?? []).includes(FINALIZER_PV);
  try {
    return await patchFinalizer(ctx, pv.metadata?.name ?? '', adds ? 'add' : 'remove');
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
    // A stopping controller (shutdown or lost leadership) interrupted the deletion: no Warning on the volume (a
    // timeout is a failure as any other).
    if (controllerStopping(signal))
      log.info({ err: describeError(err) }, 'Deletion interrupted: the controller is stopping');
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
  if (ctx.options.addFinalizer && (pv.metadata?.finalizers ?? []).length > 0) {
    const cached = ctx.getVolume(name);
    if (cached === undefined || !removeFinalizer(cached.metadata?.finalizers)[1]) return;
    try {
      await patchFinalizer(ctx, name, 'remove');
    } catch (err) {
      if (isNotFound(err)) return;
      log.error({ err: describeError(err) }, 'Failed to remove finalizer for persistentvolume');
      throw err;
    }
  }
  // Done with it: a copy of it the cache still has (or gets, until it is gone) is not to be deleted again.
  const uid = pv.metadata?.uid;
  if (uid !== undefined && ctx.getVolume(name)?.metadata?.uid === uid) ctx.deletedVolumes.add(uid);
}
