/**
 * The usage report of the `status` command, from the API alone: the config, the PVs this provisioner made and the
 * nodes. An `auto` capacity is measured on the node by the provisioner, not here: the report shows `auto` and no
 * free space for it (the provisioner's metrics have the measured size).
 *
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { makeCoreV1Calls, withSignal } from '@kprov/provisioner-lib';
import { formatBytes, type Config } from '../config/index.js';
import { allocationOf, Ledger } from './ledger.js';
import { configNodePaths } from './paths.js';
import { usageOf, type PathUsage } from './usage.js';

/** Reads the usage of every node path of `config` from the API. */
export async function readUsage(
  kubeConfig: KubeConfig,
  config: Config,
  provisionerName: string,
  signal: AbortSignal,
): Promise<PathUsage[]> {
  const core = makeCoreV1Calls(kubeConfig);
  const [volumes, nodes] = await Promise.all([
    core.listPersistentVolume({}, withSignal(signal)),
    core.listNode({}, withSignal(signal)),
  ]);
  const ledger = new Ledger();
  for (const pv of volumes.items) {
    const allocation = allocationOf(pv, provisionerName);
    if (allocation !== undefined) ledger.put(pv.metadata?.name ?? '', allocation);
  }
  const names = new Set(nodes.items.map((n) => n.metadata?.name ?? ''));
  for (const [, a] of ledger.entries()) names.add(a.node);
  return usageOf(configNodePaths(config, names), ledger, () => undefined);
}

/** The report as a table: NODE, PATH, CAPACITY, ALLOCATED, FREE, VOLUMES (`-` where unknown or no budget). */
export function formatUsage(usage: readonly PathUsage[]): string {
  const rows = [
    ['NODE', 'PATH', 'CAPACITY', 'ALLOCATED', 'FREE', 'VOLUMES'],
    ...usage.map((u) => [
      u.node,
      u.path,
      u.capacity !== undefined ? formatBytes(u.capacity) : u.auto ? 'auto' : '-',
      formatBytes(u.allocated),
      u.free === undefined ? '-' : formatBytes(u.free),
      String(u.volumes),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('')).join('\n') + '\n'
  );
}

/** The report as JSON (sizes in bytes, as decimal strings; `null` where unknown). */
export function usageJson(usage: readonly PathUsage[]): string {
  const s = (n: bigint | undefined): string | null => (n === undefined ? null : n.toString());
  return `${JSON.stringify(
    usage.map((u) => ({
      node: u.node,
      path: u.path,
      capacity: u.auto && u.capacity === undefined ? 'auto' : s(u.capacity),
      allocated: s(u.allocated),
      free: s(u.free),
      volumes: u.volumes,
    })),
    null,
    2,
  )}\n`;
}
