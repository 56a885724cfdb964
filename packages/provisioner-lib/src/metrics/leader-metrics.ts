import type { MetricsSink } from './sink.js';

/** Name of the leader-election gauge, as client-go's metrics provider (component-base, controller-runtime) has it. */
export const LEADER_ELECTION_MASTER_STATUS = 'leader_election_master_status';

/**
 * The `leader_election_master_status{name}` gauge: 1 while this process holds the lease called `name`, 0
 * otherwise. Mirrors client-go's leader-election `SwitchMetric` (`on` / `off`).
 */
export interface LeaderMetrics {
  /** This process became leader of `name`. */
  on(name: string): void;
  /** This process stopped leading (or is standing by for) `name`. */
  off(name: string): void;
  /** `on(name)` when `leading`, else `off(name)`. */
  set(name: string, leading: boolean): void;
}

/** Declares the leader-election gauge on `sink`. */
export function createLeaderMetrics(sink: MetricsSink): LeaderMetrics {
  const gauge = sink.gauge({
    name: LEADER_ELECTION_MASTER_STATUS,
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'],
  });
  const set = (name: string, leading: boolean): void => gauge.set({ name }, leading ? 1 : 0);
  return {
    on: (name) => set(name, true),
    off: (name) => set(name, false),
    set,
  };
}
