/**
 * Nodes as a kubelet registers them: the well-known labels, capacity, addresses, node info and the pressure and
 * Ready conditions, plus the `node.kubernetes.io/not-ready` taint that the node lifecycle controller keeps on a
 * node that is not Ready.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { KubeObject } from '../api/objects.js';
import { timestamp, type ObjectStore } from '../store/store.js';
import { LABEL_ARCH, LABEL_HOSTNAME, LABEL_OS, TAINT_NOT_READY } from './annotations.js';
import { view, type Condition, type Node, type Taint } from './types.js';

/** Options of {@link registerNode}. */
export interface NodeOptions {
  /** Node name, also its `kubernetes.io/hostname` label and Hostname address. */
  name: string;
  /** Extra labels (e.g. `topology.kubernetes.io/zone`); they win over the well-known ones. Default none. */
  labels?: Record<string, string>;
  /** Whether the Ready condition is True. A node that is not Ready also gets the not-ready NoSchedule taint. Default true. */
  ready?: boolean;
  /** Extra taints, e.g. `{ key: 'dedicated', value: 'storage', effect: 'NoSchedule' }`. Default none. */
  taints?: Taint[];
  /** `spec.unschedulable` (cordoned). Default false. */
  unschedulable?: boolean;
  /** Capacity (= allocatable) entries overriding the defaults (cpu 4, memory 8Gi, ephemeral-storage 100Gi, pods 110). */
  capacity?: Record<string, string>;
  /** `status.nodeInfo.kubeletVersion`. Default `v1.32.0`. */
  kubeletVersion?: string;
  /** `status.addresses`. Default InternalIP `127.0.0.1` and Hostname the node name. */
  addresses?: { type: string; address: string }[];
  /** `status.daemonEndpoints.kubeletEndpoint.Port`, where the API server fetches pod logs. Default 10250. */
  kubeletPort?: number;
}

/** The Go name of this machine's architecture, as `kubernetes.io/arch` spells it. */
export function goArch(arch: string = process.arch): string {
  const map: Record<string, string> = {
    x64: 'amd64',
    ia32: '386',
    arm64: 'arm64',
    arm: 'arm',
    ppc64: 'ppc64le',
    s390x: 's390x',
    riscv64: 'riscv64',
    loong64: 'loong64',
  };
  return map[arch] ?? arch;
}

function readyCondition(ready: boolean, now: string): Condition {
  return ready
    ? {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'kubelet is posting ready status',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      }
    : {
        type: 'Ready',
        status: 'False',
        reason: 'KubeletNotReady',
        message:
          'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      };
}

function withNotReadyTaint(taints: readonly Taint[], ready: boolean): Taint[] {
  const rest = taints.filter((t) => t.key !== TAINT_NOT_READY);
  return ready ? rest : [...rest, { key: TAINT_NOT_READY, effect: 'NoSchedule' }];
}

/** The Node object {@link registerNode} creates, without creating it. */
export function nodeObject(options: NodeOptions): KubeObject {
  const { name } = options;
  const ready = options.ready ?? true;
  const now = timestamp();
  const arch = goArch();
  const capacity = {
    cpu: '4',
    'ephemeral-storage': '104857600Ki',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: '8388608Ki',
    pods: '110',
    ...options.capacity,
  };
  const taints = withNotReadyTaint(options.taints ?? [], ready);
  const spec: Record<string, unknown> = {};
  if (taints.length > 0) spec.taints = taints;
  if (options.unschedulable === true) spec.unschedulable = true;
  const machineId = createHash('sha256').update(name).digest('hex').slice(0, 32);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': arch,
        'beta.kubernetes.io/os': 'linux',
        [LABEL_ARCH]: arch,
        [LABEL_HOSTNAME]: name,
        [LABEL_OS]: 'linux',
        ...options.labels,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec,
    status: {
      capacity,
      allocatable: { ...capacity },
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          reason: 'KubeletHasSufficientMemory',
          message: 'kubelet has sufficient memory available',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
        {
          type: 'DiskPressure',
          status: 'False',
          reason: 'KubeletHasNoDiskPressure',
          message: 'kubelet has no disk pressure',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
        {
          type: 'PIDPressure',
          status: 'False',
          reason: 'KubeletHasSufficientPID',
          message: 'kubelet has sufficient PID available',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
        readyCondition(ready, now),
      ],
      addresses: options.addresses ?? [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: options.kubeletPort ?? 10250 } },
      nodeInfo: {
        machineID: machineId,
        systemUUID: randomUUID(),
        bootID: randomUUID(),
        kernelVersion: 'sim',
        osImage: 'kprov testkit simulated node',
        containerRuntimeVersion: 'sim://0.1.0',
        kubeletVersion: options.kubeletVersion ?? 'v1.32.0',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: arch,
      },
    },
  };
}

/** Creates a Node as a kubelet registers it; returns the stored object. */
export function registerNode(store: ObjectStore, options: NodeOptions): KubeObject {
  return store.create('nodes', nodeObject(options));
}

/**
 * Flips a node's Ready condition (status) and the not-ready taint (spec), as a kubelet going down or up and the
 * node lifecycle controller reacting would. Returns the stored node, or `undefined` when there is no such node.
 */
export function setNodeReady(store: ObjectStore, name: string, ready: boolean): KubeObject | undefined {
  const now = timestamp();
  const updated = store.modify(
    'nodes',
    undefined,
    name,
    (obj) => {
      const node = view<Node>(obj);
      const status = node.status ?? {};
      const conditions = (status.conditions ?? []).filter((c) => c.type !== 'Ready');
      const old = (status.conditions ?? []).find((c) => c.type === 'Ready');
      if (old !== undefined && (old.status === 'True') === ready) return false;
      conditions.push(readyCondition(ready, now));
      node.status = { ...status, conditions };
    },
    { subresource: 'status' },
  );
  if (updated === undefined) return undefined;
  return store.modify('nodes', undefined, name, (obj) => {
    const node = view<Node>(obj);
    const spec = node.spec ?? {};
    const taints = withNotReadyTaint(spec.taints ?? [], ready);
    if (JSON.stringify(taints) === JSON.stringify(spec.taints ?? [])) return false;
    node.spec = { ...spec, taints };
    if (taints.length === 0) delete node.spec.taints;
  });
}
