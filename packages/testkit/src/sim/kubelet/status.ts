/**
 * Pod status as the kubelet reports it (`pkg/kubelet/status/generate.go`, `kubelet_pods.go`): phase, host and pod
 * IPs, start time, init and regular container statuses, and the conditions PodReadyToStartContainers,
 * Initialized, Ready and ContainersReady (conditions of other owners, such as PodScheduled, are kept).
 */
import type { Condition, Pod } from '../types.js';
import type { LogBuffer } from './process.js';

/** `v1.ContainerState`: exactly one of the three. */
export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | {
      terminated: {
        exitCode: number;
        reason: string;
        message?: string;
        startedAt: string;
        finishedAt: string;
        containerID?: string;
      };
    };

/** What the kubelet tracks of one container. */
export interface ContainerRecord {
  name: string;
  image: string;
  /** `sidecar` is an init container with `restartPolicy: Always`. */
  kind: 'init' | 'sidecar' | 'main';
  state: ContainerState;
  lastState?: ContainerState;
  restartCount: number;
  containerID?: string;
  /** Whether an instance of it ever started. */
  everStarted: boolean;
  /** Output of the previous and the current instance (at most two). */
  logs: LogBuffer[];
  /** No more (re)starts: the pod is terminating or, for a sidecar, its regular containers are done. */
  stopping: boolean;
}

/** What the kubelet tracks of one pod. */
export interface PodRuntime {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  sandboxReady: boolean;
  podIPAssigned: boolean;
  startTime: string;
  hostIP: string;
  podIP: string;
  containers: ContainerRecord[];
}

const KUBELET_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady'];

function isReady(c: ContainerRecord): boolean {
  if (c.kind === 'init') return 'terminated' in c.state && c.state.terminated.exitCode === 0;
  return 'running' in c.state;
}

/** Go's `%s` of a string slice: `[a b]`. */
function goList(names: readonly string[]): string {
  return `[${names.join(' ')}]`;
}

function cond(type: string, ok: boolean, reason?: string, message?: string): Condition {
  const c: Condition = { type, status: ok ? 'True' : 'False' };
  if (reason !== undefined) c.reason = reason;
  if (message !== undefined) c.message = message;
  return c;
}

function containersReady(rt: PodRuntime): Condition {
  if (rt.phase === 'Succeeded') return cond('ContainersReady', false, 'PodCompleted');
  if (rt.phase === 'Failed') return cond('ContainersReady', false, 'PodFailed');
  const unready = rt.containers.filter((c) => c.kind !== 'init' && !isReady(c)).map((c) => c.name);
  if (unready.length > 0)
    return cond('ContainersReady', false, 'ContainersNotReady', `containers with unready status: ${goList(unready)}`);
  return cond('ContainersReady', true);
}

function podReady(pod: Pod, containers: Condition, existing: readonly Condition[]): Condition {
  if (containers.status !== 'True') return cond('Ready', false, containers.reason, containers.message);
  const gates = Array.isArray(pod.spec?.readinessGates)
    ? (pod.spec.readinessGates as { conditionType?: string }[])
    : [];
  const problems: string[] = [];
  for (const g of gates) {
    const c = existing.find((x) => x.type === g.conditionType);
    if (c === undefined)
      problems.push(`corresponding condition of pod readiness gate "${g.conditionType ?? ''}" does not exist.`);
    else if (c.status !== 'True')
      problems.push(`the status of pod readiness gate "${g.conditionType ?? ''}" is not "True", but ${c.status}`);
  }
  if (problems.length > 0) return cond('Ready', false, 'ReadinessGatesNotReady', problems.join(', '));
  return cond('Ready', true);
}

function initialized(rt: PodRuntime): Condition {
  if (rt.phase === 'Succeeded') return cond('Initialized', true, 'PodCompleted');
  const inits = rt.containers.filter((c) => c.kind !== 'main');
  if (inits.length === 0) return cond('Initialized', true);
  if (rt.containers.some((c) => c.kind === 'main' && c.everStarted)) return cond('Initialized', true);
  const incomplete = inits.filter((c) => (c.kind === 'sidecar' ? !c.everStarted : !isReady(c))).map((c) => c.name);
  if (incomplete.length > 0)
    return cond(
      'Initialized',
      false,
      'ContainersNotInitialized',
      `containers with incomplete status: ${goList(incomplete)}`,
    );
  return cond('Initialized', true);
}

function containerStatus(c: ContainerRecord): Record<string, unknown> {
  const s: Record<string, unknown> = {
    name: c.name,
    state: c.state,
    lastState: c.lastState ?? {},
    ready: isReady(c),
    restartCount: c.restartCount,
    image: c.image,
    imageID: c.containerID === undefined ? '' : `sim://${c.image}`,
    started: 'running' in c.state,
  };
  if (c.containerID !== undefined) s.containerID = c.containerID;
  return s;
}

/** The status the kubelet would write for a pod, given its tracked runtime and the pod as stored now. */
export function podStatus(pod: Pod, rt: PodRuntime, now: string): Record<string, unknown> {
  const existing = pod.status?.conditions ?? [];
  const ready = containersReady(rt);
  const mine = [
    cond('PodReadyToStartContainers', rt.sandboxReady),
    initialized(rt),
    podReady(pod, ready, existing),
    ready,
  ];
  const conditions: Condition[] = mine.map((c) => {
    const old = existing.find((x) => x.type === c.type);
    const lastTransitionTime =
      old?.status === c.status && old.lastTransitionTime !== undefined ? old.lastTransitionTime : now;
    return { ...c, lastProbeTime: null, lastTransitionTime };
  });
  conditions.push(...existing.filter((c) => !KUBELET_CONDITIONS.includes(c.type)));
  const status: Record<string, unknown> = { ...pod.status };
  delete status.reason;
  delete status.message;
  Object.assign(status, {
    phase: rt.phase,
    conditions,
    hostIP: rt.hostIP,
    hostIPs: [{ ip: rt.hostIP }],
    startTime: rt.startTime,
    containerStatuses: rt.containers.filter((c) => c.kind === 'main').map(containerStatus),
  });
  if (rt.podIPAssigned) Object.assign(status, { podIP: rt.podIP, podIPs: [{ ip: rt.podIP }] });
  const inits = rt.containers.filter((c) => c.kind !== 'main');
  if (inits.length > 0) status.initContainerStatuses = inits.map(containerStatus);
  return status;
}

/**
 * Whether two statuses say the same: equal JSON values, whatever the order of object keys (an API server sends them
 * in its own order), a `null` or absent field being the same thing.
 */
export function sameStatus(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameStatus(x, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const k of keys) {
    const x = ra[k] ?? null;
    const y = rb[k] ?? null;
    if (!sameStatus(x, y)) return false;
  }
  return true;
}
