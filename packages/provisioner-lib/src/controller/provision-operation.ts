import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { apiStatus, describeError, toError } from '../client/api-errors.js';
import type { Logger } from '../logging/logger.js';
import { ANN_PROVISIONED_BY, ANN_SELECTED_NODE, FINALIZER_PV } from './annotations.js';
import { canProvision, claimClass, claimKey, claimRefOf, selectedNodeName } from './claims.js';
import type { EventEmitter } from 'eventemitter3';
import type { ProvisionControllerEvents } from './events.js';
import type { ProvisionControllerClient } from './client.js';
import type { ResolvedOptions } from './options.js';
import { IgnoredError, isInfeasible, ProvisioningState, stateOf } from './provisioner.js';
import type { SlowSet } from './slow-set.js';
import type { VolumeStore } from './volume-store.js';

/** Ends a claim operation without an error to requeue (PV exists, ignored, block unsupported, rescheduled). */
export const STOP = Symbol('stop provisioning');

/** How a claim operation ended: the state, and an error (or {@link STOP}) when it did not succeed. */
export interface Outcome {
  state: ProvisioningState;
  error?: unknown;
}

/** What the provision flow needs from the controller. */
export interface ClaimOperationContext {
  options: ResolvedOptions;
  client: ProvisionControllerClient;
  knownNames: ReadonlySet<string>;
  logger: Logger;
  volumeStore: VolumeStore;
  slowSet: SlowSet;
  cachedVolume(name: string): V1PersistentVolume | undefined;
  cachedClass(name: string): V1StorageClass | undefined;
  claimEvent(claim: V1PersistentVolumeClaim, type: 'Normal' | 'Warning', reason: string, message: string): void;
  /** Where the controller's typed events go. */
  emitter: EventEmitter<ProvisionControllerEvents>;
}

/**
 * The Go library's `provisionClaimOperation`, in its order: PV already cached, block support, the class and its
 * provisioner, the `Provisioning` event, `provision`, then the PV completed (claimRef, class, provisioned-by,
 * finalizer) and saved through the volume store.
 */
export async function provisionClaimOperation(ctx: ClaimOperationContext, claim: V1PersistentVolumeClaim, signal: AbortSignal): Promise<Outcome> {
const o = ctx.options;
  const className = claimClass(claim);
  const log = ctx.logger.child({ claim: claimKey(claim), class: className });
  log.debug({}, 'Started');
  const pvName = o.volumeName(claim);
  if (ctx.cachedVolume(pvName) !== undefined) {
    log.debug({ volume: pvName }, 'PersistentVolume already exists, skipping');
    return { state: ProvisioningState.Finished, error: STOP };
  }
  const claimRef = claimRefOf(claim);
  const blocked = await canProvision(o.provisioner, o.provisionerName, claim, signal);
  if (blocked !== undefined) {
    ctx.claimEvent(claim, 'Warning', 'ProvisioningFailed', blocked);
    return { state: ProvisioningState.Finished, error: STOP };
  }
  const cls = ctx.cachedClass(className);
  if (cls === undefined) return { state: ProvisioningState.Finished, error: new Error(`storageClass "${className}" not found`) };
  if (!ctx.knownNames.has(cls.provisioner)) {
    log.info({ classProvisioner: cls.provisioner }, "Unknown provisioner requested in claim's StorageClass");
    return { state: ProvisioningState.Finished, error: STOP };
  }
  ctx.claimEvent(claim, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${claimKey(claim)}"`);
  let volume: V1PersistentVolume;
  try {
    ({ volume } = await o.provisioner.provision({ storageClass: cls, pvName, pvc: claim, selectedNodeName: selectedNodeName(claim) }, signal));
  } catch (err) {
    return provisionFailed(ctx, claim, cls.metadata?.uid ?? '', err, log, signal);
  }
  log.info({ volume: pvName }, 'Volume provisioned');
  const pv: V1PersistentVolume = { ...volume, metadata: { ...volume.metadata }, spec: { ...volume.spec } };
  pv.spec = { ...pv.spec, claimRef, storageClassName: className };
  const meta = pv.metadata ?? {};
  if (o.addFinalizer && !(meta.finalizers ?? []).includes(FINALIZER_PV)) meta.finalizers = [...(meta.finalizers ?? []), FINALIZER_PV];
  meta.annotations = { ...meta.annotations, [ANN_PROVISIONED_BY]: cls.provisioner };
  pv.metadata = meta;
  try {
    await ctx.volumeStore.storeVolume(claim, pv);
  } catch (err) {
    ctx.emitter.emit('provisionFailed', claim, toError(err));
    return { state: ProvisioningState.Finished, error: err };
  }
  ctx.emitter.emit('provisioned', claim, pv);
  return { state: ProvisioningState.Finished };
}

async function provisionFailed(
  ctx: ClaimOperationContext,
  claim: V1PersistentVolumeClaim,
  classUid: string,
  err: unknown,
  log: Logger,
  signal: AbortSignal,
): Promise<Outcome> {
  if (err instanceof IgnoredError) {
    log.debug({ reason: err.reason }, 'Volume provision ignored');
    ctx.emitter.emit('provisionIgnored', claim, err);
    return { state: ProvisioningState.Finished, error: STOP };
  }
  ctx.emitter.emit('provisionFailed', claim, toError(err));
  if (signal.aborted) {
    // The controller is stopping (shutdown or lost leadership), not the claim failing: no Warning on the claim, whose
    // provisioning the next run (or the new leader) takes up again.
    log.info({ err: describeError(err) }, 'Provisioning interrupted: the controller is stopping');
    return { state: ProvisioningState.Finished, error: err };
  }
  if (isInfeasible(err)) {
    ctx.slowSet.add(claim.metadata?.uid ?? '', classUid);
    ctx.claimEvent(
      claim,
      'Warning',
      'ProvisioningFailed',
      `Volume provisioning failed with infeasible error. Retries will be delayed. ${describeError(err)}`,
    );
    return { state: ProvisioningState.Finished, error: err };
  }
  ctx.claimEvent(claim, 'Warning', 'ProvisioningFailed', describeError(err));
  const state = stateOf(err);
  if (state === ProvisioningState.Reschedule) {
    if (claim.metadata?.annotations?.[ANN_SELECTED_NODE] === undefined) return { state: ProvisioningState.Finished, error: err };
    const updated: V1PersistentVolumeClaim = {
      ...claim,
      metadata: { ...claim.metadata, annotations: { ...claim.metadata?.annotations } },
    };
    delete updated.metadata?.annotations?.[ANN_SELECTED_NODE];
    try {
      await ctx.client.replaceNamespacedPersistentVolumeClaim({
        name: claim.metadata?.name ?? '',
        namespace: claim.metadata?.namespace ?? '',
        body: updated,
      });
    } catch (updateErr) {
      log.error({ err: describeError(updateErr) }, 'Volume rescheduling failed');
      // The ProvisioningFailed event said "rescheduling": say that it did not happen, and why, where users look.
      const forbidden = apiStatus(updateErr)?.code === 403;
      ctx.claimEvent(
        claim,
        'Warning',
        'ReschedulingFailed',
        `could not remove annotation ${ANN_SELECTED_NODE} to let the scheduler pick another node: ${describeError(updateErr)}` +
          (forbidden
            ? '; the provisioner\'s account needs the "update" verb on persistentvolumeclaims (RBAC); until then remove the annotation by hand'
            : '; it is tried again with the next attempt'),
      );
      return { state: ProvisioningState.Finished, error: err };
    }
    log.info({}, 'Volume rescheduled');
    ctx.emitter.emit('rescheduled', claim);
    return { state: ProvisioningState.Finished, error: STOP };
  }
  return { state, error: err };
}
