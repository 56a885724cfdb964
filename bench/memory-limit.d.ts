// Types of memory-limit.js, for the repository tests that start Node.js in a memory cgroup with it.

/** "512M", "1G", "268435456": bytes. */
export function parseMemoryLimit(text: string): number;

/**
 * A memory cgroup limited to `bytes` and a wrapper that starts Node.js in it (through `target`, an executable that
 * takes Node.js's arguments; default Node.js itself). Throws, saying why, when this machine cannot do it.
 */
export function memoryLimitedNode(
  bytes: number,
  tmpDir: string,
  target?: string,
): Promise<{ execPath: string; bytes: number; remove: () => Promise<void> }>;
