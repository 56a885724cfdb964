import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { apiStatus, describeError, toError } from '../client/api-errors.js';
import type { Logger } from '../logging/logger.js';
import { ANN_PROVISIONED_BY, ANN_SELECTED_NODE, FINALIZER_PV } from './annotations.js';
import { canProvision, claimClass, claimKey, claimRefOf, selectedNodeName } from './claims.js';
import type { OperationContext } from './context.js';
import { controllerStopping, failed, STOPPED, SUCCEEDED, type OperationOutcome } from './operation.js';
import { IgnoredError, isInfeasible, ProvisioningState, stateOf } from './provisioner.js';

/**
 * The Go library's `provisionClaimOperation`, in its order: PV already cached, block support, the class and its
 * provisioner, the `Provisioning` event, `provision`, then the PV completed (claimRef, class, provisioned-by,
 * finalizer) and saved through the volume store.
 */
export async function provisionClaimOperation(
  ctx: OperationContext,
  claim: V1PersistentVolumeClaim,
  signal: AbortSignal,
): Promise<OperationOutcome> {
  try {
    return await provisionClaim(ctx, claim, signal);
  } catch (err) {
    // Thrown by the provisioner's own checks (e.g. `supportsBlock`) or a listener: retried, the claim as it was.
    return failed(err, ProvisioningState.NoChange);
  }
}

async function provisionClaim(
  ctx: OperationContext,
  claim: V1PersistentVolumeClaim,
  signal: AbortSignal,
): Promise<OperationOutcome> {
  const o = ctx.options;
  const className = claimClass(claim);
  const log = ctx.logger.child({ claim: claimKey(claim), class: className });
  log.debug({}, 'Started');
  const pvName = o.volumeName(claim);
  if (ctx.getVolume(pvName) !== undefined) {
    log.debug({ volume: pvName }, 'PersistentVolume already exists, skipping');
    return STOPPED;
  }
  const claimRef = claimRefOf(claim);
  const blocked = await canProvision(ctx.provisioner, o.provisionerName, claim, signal);
  if (blocked !== undefined) {
    ctx.reporter.claimEvent(claim, 'Warning', 'ProvisioningFailed', blocked);
    return STOPPED;
  }
  const cls = ctx.getClass(className);
  if (cls === undefined) return failed(new Error(`storageClass "${className}" not found`));
  if (!ctx.knownNames.has(cls.provisioner)) {
    log.info({ classProvisioner: cls.provisioner }, "Unknown provisioner requested in claim's StorageClass");
    return STOPPED;
  }
  ctx.reporter.claimEvent(
    claim,
    'Normal',
    'Provisioning',
    `External provisioner is provisioning volume for claim "${claimKey(claim)}"`,
  );
  let volume: V1PersistentVolume;
  try {
    ({ volume } = await ctx.provisioner.provision(
      { storageClass: cls, pvName, pvc: claim, selectedNodeName: selectedNodeName(claim) },
      signal,
    ));
  } catch (err) {
    return provisionFailed(ctx, claim, cls.metadata?.uid ?? '', err, log, signal);
  }
  log.info({ volume: pvName }, 'Volume provisioned');
  const pv: V1PersistentVolume = { ...volume, metadata: { ...volume.metadata }, spec: { ...volume.spec } };
  pv.spec = { ...pv.spec, claimRef, storageClassName: className };
  const meta = pv.metadata ?? {};
  if (o.addFinalizer && !(meta.finalizers ?? []).includes(FINALIZER_PV))
    meta.finalizers = [...(meta.finalizers ?? []), FINALIZER_PV];
  meta.annotations = { ...meta.annotations, [ANN_PROVISIONED_BY]: cls.provisioner };
  pv.metadata = meta;
  try {
    await ctx.volumeStore.storeVolume(claim, pv);
  } catch (err) {
    ctx.reporter.emit('provisionFailed', claim, toError(err));
    return failed(err);
  }
  ctx.reporter.emit('provisioned', claim, pv);
  return SUCCEEDED;
}

async function provisionFailed(
  ctx: OperationContext,
  claim: V1PersistentVolumeClaim,
  classUid: string,
  err: unknown,
  log: Logger,
  signal: AbortSignal,
): Promise<OperationOutcome> {
  if (err instanceof IgnoredError) {
    log.debug({ reason: err.reason }, 'Volume provision ignored');
    ctx.reporter.emit('provisionIgnored', claim, err);
    return STOPPED;
  }
  ctx.reporter.emit('provisionFailed', claim, toError(err));
  if (controllerStopping(signal)) {
    // The controller is stopping (shutdown or lost leadership), not the claim failing: no Warning on the claim, whose
    // provisioning the next run (or the new leader) takes up again. A timeout is a failure as any other.
    log.info({ err: describeError(err) }, 'Provisioning interrupted: the controller is stopping');
    return failed(err);
  }
  if (isInfeasible(err)) {
    ctx.slowSet.add(claim.metadata?.uid ?? '', classUid);
    ctx.reporter.claimEvent(
      claim,
      'Warning',
      'ProvisioningFailed',
      `Volume provisioning failed with infeasible error. Retries will be delayed. ${describeError(err)}`,
    );
    return failed(err);
  }
  ctx.reporter.claimEvent(claim, 'Warning', 'ProvisioningFailed', describeError(err));
  const state = stateOf(err);
  if (state === ProvisioningState.Reschedule) {
    if (claim.metadata?.annotations?.[ANN_SELECTED_NODE] === undefined) return failed(err);
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
      ctx.reporter.claimEvent(
        claim,
        'Warning',
        'ReschedulingFailed',
        `could not remove annotation ${ANN_SELECTED_NODE} to let the scheduler pick another node: ${describeError(updateErr)}` +
          (forbidden
            ? '; the provisioner\'s account needs the "update" verb on persistentvolumeclaims (RBAC); until then remove the annotation by hand'
            : '; it is tried again with the next attempt'),
      );
      return failed(err);
    }
    log.info({}, 'Volume rescheduled');
    ctx.reporter.emit('rescheduled', claim);
    return STOPPED;
  }
  return failed(err, state);
}
