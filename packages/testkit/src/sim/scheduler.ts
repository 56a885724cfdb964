/**
 * kube-scheduler for pods that need storage, written anew as a level-based loop over the store. For each pending
 * pod without `spec.nodeName` (and of this scheduler's `schedulerName`):
 *
 * Pods with `spec.schedulingGates` wait until the gates are gone.
 *
 * 1. PreFilter (VolumeBinding): every `persistentVolumeClaim` volume's claim must exist, not be Lost nor being
 *    deleted, and every unbound claim must be of a `WaitForFirstConsumer` class (otherwise the pod waits for the
 *    PV controller: "pod has unbound immediate PersistentVolumeClaims").
 * 2. Filter, per node in name order, stopping at the first failing plugin as the real framework does:
 *    NodeUnschedulable (`spec.unschedulable`), TaintToleration (`NoSchedule`/`NoExecute` taints, a node that is not
 *    Ready counting as tainted `node.kubernetes.io/not-ready`), NodeAffinity (`nodeSelector` and required node
 *    affinity), VolumeBinding (bound claims: their PV's node affinity; unbound claims: a claim whose
 *    `selected-node` names another node rules the node out, else a matching Available PV usable on the node is
 *    picked, else the claim must be provisionable there: a provisioner other than `kubernetes.io/no-provisioner`
 *    and the class's `allowedTopologies`).
 * 3. Score: the feasible node with the fewest non-terminated pods, ties broken by name.
 * 4. Reserve/PreBind: picked PVs get a `claimRef` to their claim (with `bound-by-controller`), claims to provision
 *    get `volume.kubernetes.io/selected-node`; the pod is bound (`pods/binding`) once all its claims are Bound.
 *
 * A pod that fits nowhere gets condition PodScheduled False, reason Unschedulable, with the real message format
 * (`0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: ...`). A pod
 * created with `spec.nodeName` bypasses scheduling, but its unbound `WaitForFirstConsumer` claims are still
 * settled for that node, so that provisioning can start.
 *
 * Not simulated: resource requests (NodeResourcesFit), pod (anti-)affinity, topology spread, ports, preemption,
 * generic ephemeral volumes, CSI storage capacity, the bind timeout.
 */
import type { KubeObject } from '../api/objects.js';
import { timestamp, type ObjectStore } from '../store/store.js';
import { ANN_SELECTED_NODE, NO_PROVISIONER, TAINT_NOT_READY, TAINT_UNSCHEDULABLE } from './annotations.js';
import {
  firstUntoleratedTaint,
  matchesAllowedTopologies,
  matchesLabelSelector,
  matchesNodeSelector,
  storageOf,
} from './match.js';
import {
  bindVolumeToClaim,
  claimClass,
  findMatchingVolume,
  getClass,
  isClaimFullyBound,
  isDelayBinding,
  podClaimNames,
} from './pvutil.js';
import { RESYNC_KEY, WorkQueue, nsKey, splitKey, type LoopOptions, type Stoppable } from './queue.js';
import {
  view,
  viewOpt,
  type Node,
  type PersistentVolume,
  type PersistentVolumeClaim,
  type Pod,
  type Taint,
} from './types.js';

/** Options of {@link startScheduler}. */
export interface SchedulerOptions extends LoopOptions {
  /** Pods whose `spec.schedulerName` is this (or unset) are scheduled. Default `default-scheduler`. */
  schedulerName?: string;
}

const REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
const REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
const REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
const REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
const REASON_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
const PENDING = 'pending';

/** The volume decisions for one pod on one node: PVs to bind to claims, claims to provision there. */
interface VolumePlan {
  reasons: string[];
  bindings: { pv: PersistentVolume; claim: PersistentVolumeClaim }[];
  provisions: PersistentVolumeClaim[];
}

/** Starts the simulated scheduler; see the module comment. */
export function startScheduler(store: ObjectStore, options: SchedulerOptions = {}): Stoppable {
  const scheduler = new Scheduler(store, options.schedulerName ?? 'default-scheduler');
  const queue: WorkQueue = new WorkQueue((key) => scheduler.reconcile(key, queue), options);
  const unsubscribe = store.subscribe((c) => {
    if (c.resource === 'pods') {
      if (c.type !== 'DELETED') queue.add(nsKey(c.object.metadata.namespace, c.object.metadata.name));
    } else if (
      ['nodes', 'persistentvolumeclaims', 'persistentvolumes', 'storage.k8s.io/storageclasses'].includes(c.resource)
    ) {
      queue.add(PENDING);
    }
  });
  queue.add(PENDING);
  return {
    async stop() {
      unsubscribe();
      await queue.stop();
    },
  };
}

function isTerminal(pod: Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

class Scheduler {
  constructor(
    private readonly store: ObjectStore,
    private readonly schedulerName: string,
  ) {}

  reconcile(key: string, queue: WorkQueue): void {
    if (key === RESYNC_KEY || key === PENDING) {
      for (const o of this.store.peek('pods')) {
        const pod = view<Pod>(o);
        if (!isTerminal(pod) && ((pod.spec?.nodeName ?? '') === '' || podClaimNames(pod.spec?.volumes).length > 0)) {
          queue.add(nsKey(pod.metadata.namespace, pod.metadata.name));
        }
      }
      return;
    }
    const [ns, name] = splitKey(key);
    const pod = viewOpt<Pod>(this.store.peekObject('pods', ns, name));
    if (pod === undefined || pod.metadata.deletionTimestamp !== undefined || isTerminal(pod)) return;
    if ((pod.spec?.schedulerName ?? this.schedulerName) !== this.schedulerName) return;
    // Pods with scheduling gates are not scheduled until the gates are removed.
    if (Array.isArray(pod.spec?.schedulingGates) && pod.spec.schedulingGates.length > 0) return;
    const nodeName = pod.spec?.nodeName ?? '';
    if (nodeName !== '') this.settleVolumesForBoundPod(pod, nodeName);
    else this.schedule(pod);
  }

  private claimsOf(pod: Pod): { claims: PersistentVolumeClaim[]; error?: string } {
    const claims: PersistentVolumeClaim[] = [];
    for (const claimName of podClaimNames(pod.spec?.volumes)) {
      const pvc = viewOpt<PersistentVolumeClaim>(
        this.store.get('persistentvolumeclaims', pod.metadata.namespace, claimName),
      );
      if (pvc === undefined) return { claims, error: `persistentvolumeclaim "${claimName}" not found` };
      if (pvc.status?.phase === 'Lost') {
        return {
          claims,
          error: `persistentvolumeclaim "${claimName}" bound to non-existent persistentvolume "${pvc.spec?.volumeName ?? ''}"`,
        };
      }
      if (pvc.metadata.deletionTimestamp !== undefined)
        return { claims, error: `persistentvolumeclaim "${claimName}" is being deleted` };
      claims.push(pvc);
    }
    return { claims };
  }

  private schedule(pod: Pod): void {
    const nodes = this.store.list('nodes').map((o) => view<Node>(o));
    if (nodes.length === 0) return this.markUnschedulable(pod, 'no nodes available to schedule pods');
    const { claims, error } = this.claimsOf(pod);
    if (error !== undefined) return this.markUnschedulable(pod, fitError(nodes.length, error, []));
    const bound = claims.filter((c) => isClaimFullyBound(c));
    const unbound = claims.filter((c) => !isClaimFullyBound(c));
    if (unbound.some((c) => !isDelayBinding(this.store, c))) {
      return this.markUnschedulable(
        pod,
        fitError(nodes.length, 'pod has unbound immediate PersistentVolumeClaims', []),
      );
    }
    const volumes = this.store.peek('persistentvolumes').map((o) => view<PersistentVolume>(o as KubeObject));
    const failures: string[][] = [];
    const feasible: { node: Node; plan: VolumePlan }[] = [];
    for (const node of nodes) {
      const reason = this.nodeFilters(pod, node);
      if (reason !== undefined) {
        failures.push([reason]);
        continue;
      }
      const plan = this.planVolumes(node, bound, unbound, volumes);
      if (plan.reasons.length > 0) failures.push(plan.reasons);
      else feasible.push({ node, plan });
    }
    if (feasible.length === 0) return this.markUnschedulable(pod, fitError(nodes.length, undefined, failures));
    const load = this.podsPerNode();
    feasible.sort((a, b) => (load.get(a.node.metadata.name ?? '') ?? 0) - (load.get(b.node.metadata.name ?? '') ?? 0));
    const chosen = feasible[0];
    if (chosen === undefined) return;
    const nodeName = chosen.node.metadata.name ?? '';
    this.applyPlan(chosen.plan, nodeName);
    if (this.allClaimsBound(pod)) this.store.bindPod(pod.metadata.namespace ?? '', pod.metadata.name ?? '', nodeName);
  }

  /** A pod created with `spec.nodeName`: its unbound WaitForFirstConsumer claims are settled for that node. */
  private settleVolumesForBoundPod(pod: Pod, nodeName: string): void {
    const node = viewOpt<Node>(this.store.get('nodes', undefined, nodeName));
    if (node === undefined) return;
    const { claims, error } = this.claimsOf(pod);
    if (error !== undefined) return;
    const unbound = claims.filter((c) => !isClaimFullyBound(c) && isDelayBinding(this.store, c));
    if (unbound.length === 0) return;
    const volumes = this.store.peek('persistentvolumes').map((o) => view<PersistentVolume>(o as KubeObject));
    const plan = this.planVolumes(node, [], unbound, volumes);
    if (plan.reasons.length === 0) this.applyPlan(plan, nodeName);
  }

  /** NodeUnschedulable, TaintToleration, NodeAffinity: the first failure reason, if any. */
  private nodeFilters(pod: Pod, node: Node): string | undefined {
    const tolerations = pod.spec?.tolerations;
    if (
      node.spec?.unschedulable === true &&
      firstUntoleratedTaint([{ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' }], tolerations) !== undefined
    ) {
      return REASON_UNSCHEDULABLE;
    }
    const taints: Taint[] = [...(node.spec?.taints ?? [])];
    const ready = (node.status?.conditions ?? []).find((c) => c.type === 'Ready')?.status === 'True';
    if (!ready && !taints.some((t) => t.key === TAINT_NOT_READY))
      taints.push({ key: TAINT_NOT_READY, effect: 'NoSchedule' });
    const taint = firstUntoleratedTaint(taints, tolerations);
    if (taint !== undefined) return `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`;
    const labels = node.metadata.labels;
    const name = node.metadata.name ?? '';
    const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (
      !matchesLabelSelector({ matchLabels: pod.spec?.nodeSelector ?? {} }, labels) ||
      !matchesNodeSelector(required, labels, name)
    ) {
      return REASON_AFFINITY;
    }
    return undefined;
  }

  /** VolumeBinding's Filter (`FindPodVolumes`) for one node. */
  private planVolumes(
    node: Node,
    bound: readonly PersistentVolumeClaim[],
    unbound: readonly PersistentVolumeClaim[],
    volumes: readonly PersistentVolume[],
  ): VolumePlan {
    const plan: VolumePlan = { reasons: [], bindings: [], provisions: [] };
    const nodeName = node.metadata.name ?? '';
    let affinityOk = true;
    let pvsFound = true;
    for (const claim of bound) {
      const pv = volumes.find((v) => v.metadata.name === claim.spec?.volumeName);
      if (pv === undefined) {
        pvsFound = false;
        break;
      }
      if (!matchesNodeSelector(pv.spec?.nodeAffinity?.required, node.metadata.labels, nodeName)) {
        affinityOk = false;
        break;
      }
    }
    let unboundOk = true;
    const toFind: PersistentVolumeClaim[] = [];
    const toProvision: PersistentVolumeClaim[] = [];
    for (const claim of unbound) {
      const selected = claim.metadata.annotations?.[ANN_SELECTED_NODE];
      if (selected === undefined) toFind.push(claim);
      else if (selected === nodeName) toProvision.push(claim);
      else unboundOk = false;
    }
    if (unboundOk) {
      const excluded = new Set<string>();
      toFind.sort((a, b) => storageOf(a.spec?.resources?.requests) - storageOf(b.spec?.resources?.requests));
      for (const claim of toFind) {
        const pv = findMatchingVolume(claim, volumes, { node, excluded });
        if (pv === undefined) toProvision.push(claim);
        else {
          excluded.add(pv.metadata.name ?? '');
          plan.bindings.push({ pv, claim });
        }
      }
      for (const claim of toProvision) {
        const sc = getClass(this.store, claimClass(claim));
        const provisioner = sc?.provisioner ?? '';
        if (
          sc === undefined ||
          provisioner === '' ||
          provisioner === NO_PROVISIONER ||
          !matchesAllowedTopologies(sc, node.metadata.labels)
        ) {
          unboundOk = false;
          break;
        }
        plan.provisions.push(claim);
      }
    }
    if (!affinityOk) plan.reasons.push(REASON_NODE_CONFLICT);
    if (!unboundOk) plan.reasons.push(REASON_BIND_CONFLICT);
    if (!pvsFound) plan.reasons.push(REASON_PV_NOT_EXIST);
    return plan;
  }

  private applyPlan(plan: VolumePlan, nodeName: string): void {
    for (const { pv, claim } of plan.bindings) {
      this.store.modify('persistentvolumes', undefined, pv.metadata.name ?? '', (o) =>
        bindVolumeToClaim(view<PersistentVolume>(o), claim),
      );
    }
    for (const claim of plan.provisions) {
      this.store.modify('persistentvolumeclaims', claim.metadata.namespace, claim.metadata.name ?? '', (o) => {
        if (o.metadata.annotations?.[ANN_SELECTED_NODE] === nodeName) return false;
        o.metadata.annotations = { ...o.metadata.annotations, [ANN_SELECTED_NODE]: nodeName };
      });
    }
  }

  private allClaimsBound(pod: Pod): boolean {
    const { claims, error } = this.claimsOf(pod);
    return error === undefined && claims.every((c) => isClaimFullyBound(c));
  }

  private podsPerNode(): Map<string, number> {
    const load = new Map<string, number>();
    for (const o of this.store.peek('pods')) {
      const pod = view<Pod>(o);
      const node = pod.spec?.nodeName ?? '';
      if (node !== '' && !isTerminal(pod)) load.set(node, (load.get(node) ?? 0) + 1);
    }
    return load;
  }

  /** Sets PodScheduled False / Unschedulable with the message, keeping the transition time if already False. */
  private markUnschedulable(pod: Pod, message: string): void {
    this.store.modify(
      'pods',
      pod.metadata.namespace,
      pod.metadata.name ?? '',
      (o) => {
        const p = view<Pod>(o);
        if ((p.spec?.nodeName ?? '') !== '') return false;
        const status = p.status ?? {};
        const conditions = status.conditions ?? [];
        const old = conditions.find((c) => c.type === 'PodScheduled');
        if (old?.status === 'False' && old.reason === 'Unschedulable' && old.message === message) return false;
        const lastTransitionTime =
          old?.status === 'False' && old.lastTransitionTime !== undefined ? old.lastTransitionTime : timestamp();
        const next = {
          type: 'PodScheduled',
          status: 'False',
          lastProbeTime: null,
          lastTransitionTime,
          reason: 'Unschedulable',
          message,
        };
        p.status = {
          ...status,
          phase: status.phase ?? 'Pending',
          conditions: [...conditions.filter((c) => c.type !== 'PodScheduled'), next],
        };
      },
      { subresource: 'status' },
    );
  }
}

/** `FitError.Error()`: the PreFilter message or the sorted histogram of node reasons, then the preemption verdict. */
function fitError(numNodes: number, preFilterMessage: string | undefined, failures: readonly string[][]): string {
  let msg = `0/${numNodes} nodes are available:`;
  if (preFilterMessage !== undefined) {
    msg += ` ${preFilterMessage}.`;
  } else {
    const counts = new Map<string, number>();
    for (const reasons of failures) for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
    const parts = [...counts.entries()].map(([r, n]) => `${n} ${r}`).sort();
    if (parts.length > 0) msg += ` ${parts.join(', ')}.`;
  }
  return `${msg} preemption: 0/${numNodes} nodes are available: ${numNodes} Preemption is not helpful for scheduling.`;
}
