/**
 * What a failed script shows of its output: its last lines, whether it ran in a helper pod (the pod's log) or as a
 * child process of node mode (its combined output).
 *
 * @module
 */

/** How many output lines of a failed script go into the error. */
export const FAILED_LOG_LINES = 10;

/** The last `count` non-empty lines of `text`. */
export function lastLines(text: string, count: number = FAILED_LOG_LINES): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .slice(-count);
}
