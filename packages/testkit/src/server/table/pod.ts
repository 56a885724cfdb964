/** The Pod printer: READY, the aggregate STATUS, RESTARTS with the last restart's age, and the wide columns. */

import type { KubeObject } from '../../api/objects.js';
import { AGE_COLUMN, NAME_COLUMN, age, arr, column, deleting, has, int, parseTime, rec, since, str } from './common.js';
import type { PrintedRow, Printer, TableRowCondition } from './types.js';

const SUCCEEDED: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const FAILED: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

/** The newer of a running latest-restart time and a container's last termination, as the printer tracks it. */
function later(latest: number | undefined, lastState: unknown): number | undefined {
  const finished = parseTime(rec(rec(lastState).terminated).finishedAt);
  if (finished === undefined) return latest;
  return latest === undefined || latest < finished ? finished : latest;
}

/** A sidecar: an init container with `restartPolicy: Always`, which keeps running next to the app containers. */
function isRestartable(container: unknown): boolean {
  return str(rec(container).restartPolicy) === 'Always';
}

function conditionIs(conditions: unknown[], type: string): boolean {
  const c = conditions.map(rec).find((x) => x.type === type);
  return c !== undefined && c.status === 'True';
}

/** The reason a terminated container shows: its reason, else its signal or exit code. */
function terminatedReason(terminated: Record<string, unknown>, prefix: string): string {
  const reason = str(terminated.reason);
  if (reason !== '') return `${prefix}${reason}`;
  const signal = int(terminated.signal);
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${int(terminated.exitCode)}`;
}

function printPod(pod: KubeObject, now: number): PrintedRow {
  const spec = rec(pod.spec);
  const status = rec(pod.status);
  const conditions = arr(status.conditions);
  const initSpecs = arr(spec.initContainers);
  const phase = str(status.phase);

  let reason = str(status.reason) || phase;
  if (conditions.map(rec).some((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated'))
    reason = 'SchedulingGated';

  const total = arr(spec.containers).length + initSpecs.filter(isRestartable).length;
  let ready = 0;
  let restarts = 0;
  let lastRestart: number | undefined;
  let sidecarRestarts = 0;
  let sidecarLastRestart: number | undefined;

  // Init containers run in order; the first one that has not succeeded decides the status.
  let initializing = false;
  const initStatuses = arr(status.initContainerStatuses).map(rec);
  for (const [i, cs] of initStatuses.entries()) {
    const count = int(cs.restartCount);
    restarts += count;
    lastRestart = later(lastRestart, cs.lastState);
    const sidecar = isRestartable(initSpecs.map(rec).find((c) => c.name === cs.name));
    if (sidecar) {
      sidecarRestarts += count;
      sidecarLastRestart = later(sidecarLastRestart, cs.lastState);
    }
    const state = rec(cs.state);
    const terminated = has(state, 'terminated') ? rec(state.terminated) : undefined;
    const waitingReason = str(rec(state.waiting).reason);
    if (terminated !== undefined && int(terminated.exitCode) === 0) continue;
    if (sidecar && cs.started === true) {
      if (cs.ready === true) ready++;
      continue;
    }
    if (terminated !== undefined) reason = terminatedReason(terminated, 'Init:');
    else if (waitingReason !== '' && waitingReason !== 'PodInitializing') reason = `Init:${waitingReason}`;
    else reason = `Init:${i}/${initSpecs.length}`;
    initializing = true;
    break;
  }

  if (!initializing || conditionIs(conditions, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = sidecarLastRestart;
    let hasRunning = false;
    const statuses = arr(status.containerStatuses).map(rec);
    // The first container in the list that is waiting or terminated wins, hence the walk from the back.
    for (const cs of statuses.reverse()) {
      restarts += int(cs.restartCount);
      lastRestart = later(lastRestart, cs.lastState);
      const state = rec(cs.state);
      const waitingReason = str(rec(state.waiting).reason);
      if (waitingReason !== '') reason = waitingReason;
      else if (has(state, 'terminated')) reason = terminatedReason(rec(state.terminated), '');
      else if (cs.ready === true && has(state, 'running')) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = conditionIs(conditions, 'Ready') ? 'Running' : 'NotReady';
  }

  if (deleting(pod) && str(status.reason) === 'NodeLost') reason = 'Unknown';
  else if (deleting(pod) && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsCell =
    restarts !== 0 && lastRestart !== undefined ? `${restarts} (${since(lastRestart, now)} ago)` : String(restarts);

  // The internal PodStatus keeps only podIPs; v1 podIP wins when both are set.
  const podIP = str(status.podIP) || str(rec(arr(status.podIPs)[0]).ip) || '<none>';
  const gates = arr(spec.readinessGates).map(rec);
  let readinessGates = '<none>';
  if (gates.length > 0) {
    const met = gates.filter((g) => {
      const c = conditions.map(rec).find((x) => x.type === g.conditionType);
      return c !== undefined && c.status === 'True';
    }).length;
    readinessGates = `${met}/${gates.length}`;
  }

  const row: PrintedRow = {
    cells: [
      str(pod.metadata.name),
      `${ready}/${total}`,
      reason,
      restartsCell,
      age(pod.metadata, now),
      podIP,
      str(spec.nodeName) || '<none>',
      str(status.nominatedNodeName) || '<none>',
      readinessGates,
    ],
  };
  if (phase === 'Succeeded') row.conditions = structuredClone(SUCCEEDED);
  else if (phase === 'Failed') row.conditions = structuredClone(FAILED);
  return row;
}

/** Pods: NAME, READY, STATUS, RESTARTS, AGE; wide IP, NODE, NOMINATED NODE, READINESS GATES. */
export const POD_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.'),
    column('Status', 'string', 'The aggregate status of the containers in this pod.'),
    column(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    AGE_COLUMN,
    column(
      'IP',
      'string',
      'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
      {
        priority: 1,
      },
    ),
    column(
      'Node',
      'string',
      'NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename',
      { priority: 1 },
    ),
    column(
      'Nominated Node',
      'string',
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
      { priority: 1 },
    ),
    column(
      'Readiness Gates',
      'string',
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
      { priority: 1 },
    ),
  ],
  print: printPod,
};
