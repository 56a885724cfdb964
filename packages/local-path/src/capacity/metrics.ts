/**
 * Metrics of node paths, through the library's metrics sink (the binary wires prom-client): capacity, allocated,
 * free and volumes per node and path.
 *
 * @module
 */
import { noopMetrics, type Gauge, type MetricsSink } from '@kprov/provisioner-lib';
import type { PathUsage } from './usage.js';

/** Prefix of the capacity metrics. */
export const CAPACITY_METRICS_PREFIX = 'local_path_provisioner_path';

/** The gauges of node path usage. */
export class CapacityMetrics {
  private readonly capacity: Gauge;
  private readonly allocated: Gauge;
  private readonly free: Gauge;
  private readonly fileSystemFree: Gauge;
  private readonly volumes: Gauge;
  /** Label sets written, so that a path no longer reported is set to 0 rather than left at its last value. */
  private readonly seen = new Map<string, { node: string; path: string }>();

  constructor(sink: MetricsSink = noopMetrics) {
    const gauge = (name: string, help: string): Gauge =>
      sink.gauge({ name: `${CAPACITY_METRICS_PREFIX}_${name}`, help, labelNames: ['node', 'path'] });
    this.capacity = gauge('capacity_bytes', 'Declared capacity of a node path (for auto: the file system size).');
    this.allocated = gauge('allocated_bytes', 'Sum of the sizes of the volumes placed on a node path.');
    this.free = gauge('free_bytes', 'Capacity minus allocated of a node path with a capacity.');
    this.fileSystemFree = gauge(
      'filesystem_free_bytes',
      'Free space of the file system of an auto node path, at its last measurement.',
    );
    this.volumes = gauge('volumes', 'Number of volumes placed on a node path.');
  }

  /** Sets every gauge from `usage`; paths reported before and missing now go to 0. */
  update(usage: readonly PathUsage[]): void {
    const now = new Set<string>();
    for (const u of usage) {
      const labels = { node: u.node, path: u.path };
      const key = `${u.node}\u0000${u.path}`;
      now.add(key);
      this.seen.set(key, labels);
      this.allocated.set(labels, Number(u.allocated));
      this.volumes.set(labels, u.volumes);
      if (u.capacity !== undefined) this.capacity.set(labels, Number(u.capacity));
      if (u.free !== undefined) this.free.set(labels, Number(u.free));
      if (u.fileSystemFree !== undefined) this.fileSystemFree.set(labels, Number(u.fileSystemFree));
    }
    for (const [key, labels] of this.seen) {
      if (now.has(key)) continue;
      for (const g of [this.capacity, this.allocated, this.free, this.fileSystemFree, this.volumes]) g.set(labels, 0);
      this.seen.delete(key);
    }
  }
}
