// The failures `pnpm images` reports in its own words, as one message and no stack trace.

/** Bad input, a missing tool, a failed command: what went wrong and what to do. */
export class ImagesError extends Error {}
