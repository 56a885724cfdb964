/**
 * client-go's order of the Lease timings (`NewLeaderElector`), checked where a binary reads its flags so that the
 * error names the flag: the lease duration is longer than the renew deadline, which is longer than `JitterFactor`
 * (1.2) × the retry period.
 */
import { JITTER_FACTOR } from '../leaderelection/config.js';

/** The three timings, in ms. */
export interface LeaseTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** A timing out of client-go's order: the flag that is too short, and what it must be longer than. */
export interface LeaseTimingProblem {
  /** The flag at fault, without dashes. */
  readonly flag: 'leader-election-lease-duration' | 'leader-election-renew-deadline';
  /** The flag it must be longer than, without dashes. */
  readonly than: 'leader-election-renew-deadline' | 'leader-election-retry-period';
  /** What `than` is multiplied by: 1, or `JitterFactor`. */
  readonly factor: number;
}

/** The first timing out of order, or undefined when they are in order. */
export function leaseTimingProblem(timings: LeaseTimings): LeaseTimingProblem | undefined {
  if (!(timings.leaseDurationMs > timings.renewDeadlineMs))
    return { flag: 'leader-election-lease-duration', than: 'leader-election-renew-deadline', factor: 1 };
  if (!(timings.renewDeadlineMs > JITTER_FACTOR * timings.retryPeriodMs))
    return { flag: 'leader-election-renew-deadline', than: 'leader-election-retry-period', factor: JITTER_FACTOR };
  return undefined;
}

/** `must be longer than <than>` (`1.2 × <than>`), with `dash` before the flag's name (`-` for Go's wording). */
export function longerThan(problem: LeaseTimingProblem, dash = ''): string {
  return `must be longer than ${problem.factor === 1 ? '' : `${problem.factor} × `}${dash}${problem.than}`;
}
