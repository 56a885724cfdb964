/**
 * The configuration files of a node's containerd, CNI network and kubelet. Paths are the node's own (its
 * filesystem is its folder's `fs`, see `namespace.ts`): containerd keeps its usual `/var/lib/containerd` and
 * `/run/containerd`, the kubelet `/var/lib/kubelet` and `/var/log/pods`, as on any node.
 */
import { stringify } from 'yaml';
import { CNI_BIN_DIR } from './host.js';
import { PAUSE_IMAGE } from './images.js';
import type { NodeAddresses } from './network.js';

/**
 * Where the node's own files are, inside the node. Its configuration, logs and binaries are under `/kprov` (the
 * node's `/etc` is the machine's, read-only).
 */
export const NODE_PATHS = {
  containerdConfig: '/kprov/containerd.toml',
  kubeletConfig: '/kprov/kubelet.yaml',
  kubeconfig: '/kprov/kubelet.kubeconfig',
  cniConfDir: '/kprov/cni',
  /** containerd's and the kubelet's own logs (`containerd.log`, `kubelet.log`). */
  logs: '/kprov/logs',
  /** The assets folder (kubelet), bind-mounted read-only. */
  bin: '/kprov/bin',
  containerdSocket: '/run/containerd/containerd.sock',
  kubeletRoot: '/var/lib/kubelet',
} as const;

/**
 * containerd's configuration (version 2): the CRI plugin with runc through cgroupfs, the local pause image as the
 * sandbox, CNI from Debian's plugins and this node's configuration folder. `restrict_oom_score_adj`: a process
 * without CAP_SYS_RESOURCE (a sandbox) may not lower OOM scores, and runc fails to start containers when asked to.
 */
export function containerdConfig(): string {
  const q = (s: string): string => JSON.stringify(s);
  return [
    'version = 2',
    `root = ${q('/var/lib/containerd')}`,
    `state = ${q('/run/containerd')}`,
    '[grpc]',
    `  address = ${q(NODE_PATHS.containerdSocket)}`,
    '[plugins."io.containerd.grpc.v1.cri"]',
    `  sandbox_image = ${q(PAUSE_IMAGE)}`,
    '  restrict_oom_score_adj = true',
    '  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '    runtime_type = "io.containerd.runc.v2"',
    '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    '      SystemdCgroup = false',
    '  [plugins."io.containerd.grpc.v1.cri".cni]',
    `    bin_dir = ${q(CNI_BIN_DIR)}`,
    `    conf_dir = ${q(NODE_PATHS.cniConfDir)}`,
    '',
  ].join('\n');
}

/** The pods' network: the node's bridge, addresses from its subnet, the bridge as their gateway. */
export function cniConfig(a: NodeAddresses): string {
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: 'kprov',
      plugins: [
        {
          type: 'bridge',
          bridge: a.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: a.subnet, gateway: a.nodeIp }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

/** What {@link kubeletConfig} needs. */
export interface KubeletConfigInput {
  addresses: NodeAddresses;
  /** The kubelet's port on the node's address. */
  port: number;
  /** The node's cgroup subtree (`cgroups.ts`). */
  cgroupRoot: string;
}

/**
 * The KubeletConfiguration. Besides the paths: cgroupfs on whatever cgroup layout the machine has (v1 included), swap
 * allowed, the kubelet's API open to kube-apiserver without credentials (it listens on the node's bridge address
 * only), no iptables chains of its own on the machine, and no eviction or image garbage collection for a full disk:
 * a test machine's disk is often fuller than a node's thresholds, and the node's images come from archives that
 * cannot be pulled again.
 */
export function kubeletConfig(input: KubeletConfigInput): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${input.cgroupRoot}`,
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${NODE_PATHS.containerdSocket}`,
    address: input.addresses.nodeIp,
    port: input.port,
    readOnlyPort: 0,
    healthzPort: 0,
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    makeIPTablesUtilChains: false,
    evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '0%', 'imagefs.available': '0%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    resolvConf: '/etc/resolv.conf',
  });
}
