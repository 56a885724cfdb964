import type { V1ObjectReference, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import {
  ANN_ALPHA_SELECTED_NODE,
  ANN_BETA_STORAGE_CLASS,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
} from './annotations.js';
import type { OperationContext } from './context.js';
import type { Provisioner } from './provisioner.js';

/** What the claim decisions read of the {@link OperationContext}. */
export type ClaimContext = Pick<OperationContext, 'provisioner' | 'knownNames' | 'getClass'>;

/** The claim's class: the beta annotation when present (even empty), else `spec.storageClassName`, else `''`. */
export function claimClass(claim: V1PersistentVolumeClaim): string {
  const ann = claim.metadata?.annotations;
  if (ann !== undefined && ANN_BETA_STORAGE_CLASS in ann) return ann[ANN_BETA_STORAGE_CLASS] ?? '';
  return claim.spec?.storageClassName ?? '';
}

/** The provisioner a claim asks for: the GA annotation, else the beta one, else undefined. */
export function requestedProvisioner(claim: V1PersistentVolumeClaim): string | undefined {
  const ann = claim.metadata?.annotations ?? {};
  return ann[ANN_STORAGE_PROVISIONER] ?? ann[ANN_BETA_STORAGE_PROVISIONER];
}

/** `volume.kubernetes.io/selected-node`, else the alpha key, else `''`. */
export function selectedNodeName(claim: V1PersistentVolumeClaim): string {
  const ann = claim.metadata?.annotations ?? {};
  return ann[ANN_SELECTED_NODE] ?? ann[ANN_ALPHA_SELECTED_NODE] ?? '';
}

/** Thrown by {@link shouldProvision} when the claim's class is not (yet) known. */
export class StorageClassNotFoundError extends Error {
  override readonly name = 'StorageClassNotFoundError';
  constructor(readonly className: string) {
    super(`storageClass "${className}" not found`);
  }
}

/**
 * Whether this controller should provision the claim, in the Go library's exact order: already bound; the
 * provisioner's qualifier; the storage-provisioner annotation (GA, then beta) naming one of our names; the class
 * (throws when unknown); WaitForFirstConsumer needs a selected node.
 */
export async function shouldProvision(
  ctx: ClaimContext,
  claim: V1PersistentVolumeClaim,
  signal: AbortSignal,
): Promise<boolean> {
  if ((claim.spec?.volumeName ?? '') !== '') return false;
  if (ctx.provisioner.shouldProvision !== undefined && !(await ctx.provisioner.shouldProvision(claim, signal)))
    return false;
  const wanted = requestedProvisioner(claim);
  if (wanted === undefined || !ctx.knownNames.has(wanted)) return false;
  const name = claimClass(claim);
  const cls = ctx.getClass(name);
  if (cls === undefined) throw new StorageClassNotFoundError(name);
  if (cls.volumeBindingMode === 'WaitForFirstConsumer') {
    return (claim.metadata?.annotations?.[ANN_SELECTED_NODE] ?? '') !== '';
  }
  return true;
}

/** Whether the provisioner can provision the claim's volume mode; the error text is the Go library's. */
export async function canProvision(
  provisioner: Provisioner,
  provisionerName: string,
  claim: V1PersistentVolumeClaim,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (claim.spec?.volumeMode !== 'Block') return undefined;
  const supported = provisioner.supportsBlock === undefined ? false : await provisioner.supportsBlock(signal);
  return supported ? undefined : `${provisionerName} does not support block volume provisioning`;
}

/** The claimRef a provisioned PV gets. */
export function claimRefOf(claim: V1PersistentVolumeClaim): V1ObjectReference {
  const m = claim.metadata ?? {};
  return {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
    ...(m.name === undefined ? {} : { name: m.name }),
    ...(m.uid === undefined ? {} : { uid: m.uid }),
    ...(m.resourceVersion === undefined ? {} : { resourceVersion: m.resourceVersion }),
  };
}

/** `namespace/name` of a claim, as event messages print it. */
export function claimKey(claim: V1PersistentVolumeClaim): string {
  return `${claim.metadata?.namespace ?? ''}/${claim.metadata?.name ?? ''}`;
}

/** Provision metric labels: `class` from `spec.storageClassName` only (beta annotation ignored, as in Go), `source`. */
export function provisionLabels(claim: V1PersistentVolumeClaim): { class: string; source: string } {
  return { class: claim.spec?.storageClassName ?? '', source: claim.spec?.dataSource?.kind ?? '' };
}
