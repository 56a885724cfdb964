/**
 * A node's network, in the machine's own network namespace: a bridge of its own (`kprov<N>`, 10.213.N.1/24) that
 * the CNI bridge plugin attaches the pods to and whose address is the node's InternalIP (the kubelet listens there,
 * so kube-apiserver reaches it for logs and exec), and the one service a node cannot do without, `kubernetes`: there
 * is no kube-proxy, so a DNAT rule (what kube-proxy would write) sends the pods' connections to its ClusterIP on to
 * the API server. An API server that listens on loopback only is reached through `route_localnet` on the bridge.
 */
import { lookup } from 'node:dns/promises';
import { writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { run, runQuietly } from './command.js';

/** How many nodes one machine can run at once: one /24 each. */
export const MAX_SLOTS = 250;

/** The names and addresses of the node in slot `slot` (1..{@link MAX_SLOTS}). */
export interface NodeAddresses {
  bridge: string;
  /** The pods' subnet, `10.213.N.0/24`. */
  subnet: string;
  /** The bridge's address and the node's InternalIP, `10.213.N.1`. */
  nodeIp: string;
  /** What the node's iptables rules are marked with, to find them again. */
  ruleComment: string;
}

export function nodeAddresses(slot: number): NodeAddresses {
  return {
    bridge: `kprov${slot}`,
    subnet: `10.213.${slot}.0/24`,
    nodeIp: `10.213.${slot}.1`,
    ruleComment: `kprov-node-${slot}`,
  };
}

/** Where the node's pods reach the API server: the `kubernetes` Service, and the API server's own address. */
export interface ApiServerRoute {
  serviceIp: string;
  servicePort: number;
  /** The API server's URL as the node's kubeconfig names it. */
  url: string;
}

/** Makes the bridge with the node's address; a bridge left by an earlier node of this slot is made anew. */
export async function createBridge(a: NodeAddresses): Promise<void> {
  await runQuietly('ip', ['link', 'delete', a.bridge]);
  await run('ip', ['link', 'add', a.bridge, 'type', 'bridge']);
  await run('ip', ['addr', 'add', `${a.nodeIp}/24`, 'dev', a.bridge]);
  await run('ip', ['link', 'set', a.bridge, 'up']);
}

/** Sends the pods' connections to the `kubernetes` Service on to the API server; see the module comment. */
export async function routeApiServer(a: NodeAddresses, route: ApiServerRoute): Promise<void> {
  const url = new URL(route.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const ip = isIP(host) === 4 ? host : (await lookup(host, { family: 4 })).address;
  const port = url.port === '' ? 443 : Number(url.port);
  if (ip.startsWith('127.')) await writeFile(`/proc/sys/net/ipv4/conf/${a.bridge}/route_localnet`, '1');
  await run('iptables', [
    '-w',
    '-t',
    'nat',
    '-A',
    'PREROUTING',
    '-s',
    a.subnet,
    '-d',
    `${route.serviceIp}/32`,
    '-p',
    'tcp',
    '--dport',
    String(route.servicePort),
    '-m',
    'comment',
    '--comment',
    a.ruleComment,
    '-j',
    'DNAT',
    '--to-destination',
    `${ip}:${port}`,
  ]);
}

/** Removes the node's iptables rules and its bridge; what is gone already is fine. */
export async function removeNetwork(a: NodeAddresses): Promise<void> {
  const rules = await run('iptables', ['-w', '-t', 'nat', '-S', 'PREROUTING']).catch(() => '');
  for (const rule of rules.split('\n')) {
    if (!rule.startsWith('-A PREROUTING ') || !rule.includes(`--comment ${a.ruleComment} `)) continue;
    // `iptables -S` prints each rule as the arguments that add it; -D with the same arguments deletes it.
    await runQuietly('iptables', ['-w', '-t', 'nat', '-D', ...splitRule(rule.slice('-A '.length))]);
  }
  await runQuietly('ip', ['link', 'delete', a.bridge]);
}

/** The words of a rule as `iptables -S` prints it (a quoted comment is one word). */
function splitRule(rule: string): string[] {
  return [...rule.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}
