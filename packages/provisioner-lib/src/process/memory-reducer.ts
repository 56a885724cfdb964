import { Script } from 'node:vm';
import { sharedInterval } from './shared-interval.js';

/**
 * Keeping V8's memory reducer working in a process that runs a controller.
 *
 * V8 gives back the heap pages a burst of work used (it compacts the heap and releases the pages it keeps pooled
 * for reuse) only in a "memory-reducing" garbage collection, which its memory reducer starts once the process has
 * gone quiet. It judges that from three allocation rates, one of them the allocation rate of the embedder's own
 * garbage-collected heap (cppgc). Since V8 13.1 (Node.js 24) a rate that is exactly zero counts as the highest, and
 * a Node.js program that never allocates there has a rate of exactly zero: the reducer then never sees a quiet
 * process, and only its watchdog, 100 s after the last full collection, ever reduces memory; any ordinary full
 * collection in between postpones it. A controller that provisioned a burst of volumes kept the memory of the
 * burst's peak for as long as it then idled: 182 MiB of RSS with 10,000 claims and PVs cached, against 125 once
 * the reducer ran (bench/README.md).
 *
 * Compiling a `vm.Script` allocates a small object on that heap, which makes the rate small rather than zero. One
 * every 30 s keeps it so (a single one decays back to zero within a minute or two); each costs a few microseconds.
 */

/** How often a script is compiled, in ms. */
const INTERVAL_MS = 30_000;

function allocate(): void {
  // The empty script is compiled once and then comes from V8's compilation cache; the wrapper object Node.js makes
  // for it is what lands on the embedder's heap.
  new Script('');
}

const hold = sharedInterval(allocate, INTERVAL_MS, { ref: false, runAtStart: true });

/**
 * Keeps V8's memory reducer able to run until the returned function is called (calling it again does nothing). All
 * holders share one unref'd timer, cleared when the last one releases it.
 */
export function keepMemoryReducerWorking(): () => void {
  return hold();
}
