/**
 * Choosing a base path where a claim fits, and the errors when none does: the node is full (the controller hands
 * the claim back to the scheduler), or the claim is larger than any path of its class could ever hold.
 *
 * @module
 */
import { InfeasibleError, ProvisioningError, ProvisioningState } from '@kprov/provisioner-lib';
import { formatBytes, type BasePath, type RandomSource, type StorageClassConfig } from '../config/index.js';

/** What {@link VolumePlacement.place} needs to know about a claim. */
export interface PlaceRequest {
  /** The claim's class config. */
  readonly classConfig: StorageClassConfig;
  /** The claim's StorageClass name, for messages. */
  readonly className: string;
  /** The PV name: the reservation's key. */
  readonly pvName: string;
  /** `<namespace>/<name>` of the claim, for messages. */
  readonly claim: string;
  /** The selected node; `""` leaves the choice to upstream's rules. */
  readonly nodeName: string;
  /** The StorageClass parameter `nodePath`, when set. */
  readonly nodePath?: string | undefined;
  /** The claim's request in bytes. */
  readonly requestBytes: bigint;
}

/**
 * The placement port: what the provisioner asks of the capacity budgets (a `CapacityTracker`), between its claim
 * checks and the volume path.
 */
export interface VolumePlacement {
  /**
   * The base path for a claim on its selected node, with its reservation taken; `undefined` when no budget applies
   * (upstream's rules choose then).
   *
   * @throws ProvisioningError with state Reschedule when the claim fits on none of the node's paths;
   *   InfeasibleError when it is larger than every path of the class.
   */
  place(request: PlaceRequest, signal: AbortSignal): Promise<BasePath | undefined>;
  /** Drops the reservation of a volume (its provisioning failed, or its volume is deleted). */
  release(pvName: string): void;
}

/** A path the claim could go to, with what is known of its budget. */
export interface Candidate {
  /** The base path. */
  readonly path: string;
  /** The capacity in bytes; `undefined`: no budget (always fits). */
  readonly capacity: bigint | undefined;
  /** Allocated on the path now (volumes and reservations). */
  readonly allocated: bigint;
  /** How many volumes `allocated` counts. */
  readonly volumes: number;
}

/** The message prefix of a claim handed back to the scheduler for lack of space. */
export const NOT_ENOUGH_SPACE = 'not enough space on node';

/** Whether `request` bytes fit on the candidate. */
export function fits(candidate: Candidate, request: bigint): boolean {
  return candidate.capacity === undefined || candidate.allocated + request <= candidate.capacity;
}

function describe(c: Candidate): string {
  if (c.capacity === undefined) return `${c.path} has no capacity set`;
  const free = c.capacity - c.allocated;
  const s = c.volumes === 1 ? '' : 's';
  return `${c.path} has ${formatBytes(free > 0n ? free : 0n)} free (capacity ${formatBytes(c.capacity)}, ${formatBytes(c.allocated)} allocated to ${c.volumes} volume${s})`;
}

/**
 * One of the candidates where `request` fits, uniformly at random (as upstream picks among a node's paths).
 *
 * @throws ProvisioningError with state Reschedule, `not enough space on node <n> for claim <c> (requests <size>):
 *   <path> has <free> free (...)`, when none fits.
 */
export function choosePath(
  candidates: readonly Candidate[],
  request: bigint,
  where: { node: string; claim: string },
  random: RandomSource = Math.random,
): string {
  const fitting = candidates.filter((c) => fits(c, request));
  if (fitting.length === 0) {
    throw new ProvisioningError(
      `${NOT_ENOUGH_SPACE} ${where.node} for claim ${where.claim} (requests ${formatBytes(request)}): ` +
        `${candidates.map(describe).join('; ')}; rescheduling, so that the scheduler picks another node`,
      { state: ProvisioningState.Reschedule },
    );
  }
  const index = Math.min(fitting.length - 1, Math.max(0, Math.floor(random() * fitting.length)));
  return fitting[index]!.path;
}

/**
 * Refuses a claim larger than the largest capacity of its class's paths (`largest`, when every path has a known
 * capacity): no node could ever hold it, so it is not handed to the scheduler again.
 *
 * @throws InfeasibleError `the claim <c> requests <size>, more than any path of StorageClass "<class>" can hold ...`.
 */
export function checkAnyPathCanHold(
  largest: bigint | undefined,
  request: bigint,
  where: { claim: string; className: string },
): void {
  if (largest === undefined || request <= largest) return;
  throw new InfeasibleError(
    `the claim ${where.claim} requests ${formatBytes(request)}, more than any path of StorageClass "${where.className}" can hold ` +
      `(the largest capacity is ${formatBytes(largest)}); ask for at most ${formatBytes(largest)}, or give a path a larger capacity`,
  );
}
