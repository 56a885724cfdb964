import type { Clock } from '../clock/clock.js';
import { realClock } from '../clock/clock.js';

/** Options for {@link Backoff}. Times in milliseconds. */
export interface BackoffOptions {
  /**
   * Base of the first delay.
   * @defaultValue `800`
   */
  initialMs?: number;
  /**
   * Cap of the base delay (0 for none). Jitter is added on top, so a returned delay can reach
   * `maxMs · (1 + jitter)`.
   * @defaultValue `30_000`
   */
  maxMs?: number;
  /**
   * Multiplier of the base delay after each step (0 keeps it constant).
   * @defaultValue `2`
   */
  factor?: number;
  /**
   * Each delay is the base plus a uniformly random extra in `[0, jitter · base)`; 0 disables jitter.
   * @defaultValue `1.0`
   */
  jitter?: number;
  /**
   * When no delay was requested for longer than this, the sequence starts over from `initialMs`.
   * @defaultValue `120_000`
   */
  resetAfterMs?: number;
  /**
   * Time source for `resetAfterMs`.
   * @defaultValue `realClock`
   */
  clock?: Clock;
  /**
   * Source of uniform numbers in `[0, 1)` for the jitter.
   * @defaultValue `Math.random`
   */
  random?: () => number;
}

function check(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`Backoff option ${name} must be a finite number >= 0 (got ${value})`);
  }
  return value;
}

/**
 * Jittered exponential backoff that starts over after a quiet period: client-go's reflector backoff
 * (`wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)` in `tools/cache/reflector.go`), which kube-rs
 * copies as its watcher `DefaultBackoff`. With the defaults the base delays are 0.8, 1.6, 3.2, 6.4, 12.8, 25.6,
 * 30, 30 … s, each returned with up to 100 % jitter added.
 *
 * It only computes delays; the caller sleeps (e.g. with `sleep(clock, backoff.next())`).
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  /** Base of the next delay. */
  private currentMs: number;
  /** Set once the base reached the cap; it stays there until a reset. */
  private capped = false;
  /** When `next` was last called (or the backoff created). */
  private lastStart: number;

  /** @param options - see {@link BackoffOptions}. */
  constructor(options: BackoffOptions = {}) {
    this.initialMs = check('initialMs', options.initialMs ?? 800);
    this.maxMs = check('maxMs', options.maxMs ?? 30_000);
    this.factor = check('factor', options.factor ?? 2);
    this.jitter = check('jitter', options.jitter ?? 1.0);
    this.resetAfterMs = check('resetAfterMs', options.resetAfterMs ?? 120_000);
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.currentMs = this.initialMs;
    this.lastStart = this.clock.now();
  }

  /**
   * The next delay in ms, after another failure. Starts over from `initialMs` when the previous call was more
   * than `resetAfterMs` ago.
   */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastStart > this.resetAfterMs) this.reset();
    this.lastStart = now;

    const base = this.currentMs;
    if (!this.capped && this.factor !== 0) {
      const grown = base * this.factor;
      if (this.maxMs > 0 && grown > this.maxMs) {
        this.currentMs = this.maxMs;
        this.capped = true;
      } else {
        this.currentMs = grown;
      }
    }
    return this.jitter > 0 ? base + this.random() * this.jitter * base : base;
  }

  /** Starts the sequence over from `initialMs` (call after a success). */
  reset(): void {
    this.currentMs = this.initialMs;
    this.capped = false;
  }
}
