// Waiting for a condition in the bench driver: the figures come from watch events and their own timestamps, so
// the poll interval only decides how soon the driver moves on, not what is measured.
import { setTimeout as sleep } from 'node:timers/promises';
import { now } from './common.js';

/** Polls `condition` (sync or async) every `intervalMs` until it is true (resolves true) or `timeoutMs` pass (false). */
export async function until(condition, timeoutMs, intervalMs = 25) {
  const deadline = now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (now() >= deadline) return false;
    await sleep(intervalMs);
  }
}
