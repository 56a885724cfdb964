/**
 * One interval timer shared by any number of holders: the first holder starts it, the last one to let go clears it.
 * What the library keeps running for as long as a long-running call is pending (holding the process open, keeping
 * V8's memory reducer working) is one such timer, however many controllers run.
 *
 * Not a clock timer on purpose: these measure no time of the library's; they hold the process, or work around what
 * V8 does on real time, whatever clock is injected.
 */
export interface SharedIntervalOptions {
  /** Whether the timer keeps the process alive (a ref'd timer). */
  ref: boolean;
  /** Whether `callback` also runs when the timer starts. Default false. */
  runAtStart?: boolean;
}

/**
 * Returns `hold`: each call holds the timer until the function it returns is called (calling that again does
 * nothing).
 */
export function sharedInterval(callback: () => void, ms: number, options: SharedIntervalOptions): () => () => void {
  let holders = 0;
  let handle: NodeJS.Timeout | undefined;
  return () => {
    holders += 1;
    if (handle === undefined) {
      if (options.runAtStart === true) callback();
      handle = setInterval(callback, ms);
      if (!options.ref) handle.unref();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      holders -= 1;
      if (holders === 0 && handle !== undefined) {
        clearInterval(handle);
        handle = undefined;
      }
    };
  };
}
