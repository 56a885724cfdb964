/**
 * The logger the library writes to. Shaped like pino's (`logger.info({ key: value }, 'Message')`), so a pino
 * logger can be passed as is; the library never picks one itself. Messages start with a capital letter and carry
 * variable data as key/value pairs, as klog's structured logging does.
 */
export interface Logger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger;
}

/** Discards everything. The default. */
export const silentLogger: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  child: () => silentLogger,
};
