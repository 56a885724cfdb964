import type { Logger } from '../../src/logging/logger.js';

/** One logged line. */
export interface LogLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  fields: Record<string, unknown>;
  message: string;
}

/** A logger that keeps every line, for assertions. */
export function captureLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  const make = (base: Record<string, unknown>): Logger => ({
    error: (fields, message) => lines.push({ level: 'error', fields: { ...base, ...fields }, message }),
    warn: (fields, message) => lines.push({ level: 'warn', fields: { ...base, ...fields }, message }),
    info: (fields, message) => lines.push({ level: 'info', fields: { ...base, ...fields }, message }),
    debug: (fields, message) => lines.push({ level: 'debug', fields: { ...base, ...fields }, message }),
    child: (fields) => make({ ...base, ...fields }),
  });
  return Object.assign(make({}), { lines });
}
