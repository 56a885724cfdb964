/**
 * @packageDocumentation
 * `@kprov/provisioner-lib/pino`: pino loggers for provisioner binaries, shaped like klog's output: `json` as
 * Kubernetes' JSON log format (`ts` in milliseconds, `msg`, `v`, errors as `err` strings), `text` as klog's text
 * header followed by the message and key/value pairs. The library itself takes any `Logger`; pino is an optional peer.
 */
import { createRequire } from 'node:module';
import type { Logger as PinoLogger, DestinationStream, LevelWithSilent } from 'pino';

// pino, loaded when the first logger is made: loading the runtime runs nothing of pino's before `runProvisioner`
// (see runtime/v8-flags.ts).
const require = createRequire(import.meta.url);
function pinoModule(): typeof import('pino') {
  return require('pino') as typeof import('pino');
}

/** Where log lines go: anything with a `write(line)`, such as `process.stderr`. */
export interface LogSink {
  write(line: string): unknown;
}

/** The pino level for a klog verbosity: debug from 4 (the Go library's V(4) messages), trace from 5. */
export function levelFor(verbosity: number): LevelWithSilent {
  if (verbosity >= 5) return 'trace';
  if (verbosity >= 4) return 'debug';
  return 'info';
}

/** klog's `v` of a pino level; errors carry none, as in klog's JSON. */
function verbosityOf(level: number): number | undefined {
  if (level >= 50) return undefined;
  if (level >= 30) return 0;
  return level >= 20 ? 4 : 5;
}

/** Milliseconds since the epoch with sub-millisecond precision, as klog's JSON `ts`. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** klog's header: `I0102 15:04:05.000000   12345] `. */
function klogHeader(level: number, ms: number): string {
  const d = new Date(ms);
  let severity = 'I';
  if (level >= 50) severity = level >= 60 ? 'F' : 'E';
  else if (level >= 40) severity = 'W';
  const micros = pad(Math.floor((ms % 1000) * 1000), 6);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${micros}`;
  return `${severity}${pad(d.getMonth() + 1)}${pad(d.getDate())} ${time} ${String(process.pid).padStart(7)}] `;
}

function formatValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? 'undefined';
}

/** Renders pino's JSON lines (with `level` and `time`) as klog text lines. */
function textDestination(sink: LogSink): DestinationStream {
  return {
    write(line: string) {
      const { level, time, msg, ...fields } = JSON.parse(line) as Record<string, unknown> & {
        level: number;
        time: number;
        msg?: string;
      };
      const pairs = Object.entries(fields).map(([k, v]) => ` ${k}=${formatValue(v)}`);
      sink.write(`${klogHeader(level, time)}${JSON.stringify(msg ?? '')}${pairs.join('')}\n`);
    },
  };
}

const errString = (e: unknown): unknown => (e instanceof Error ? e.message : e);

/** A pino logger writing `format` lines to `sink` at the level `verbosity` selects. */
export function createLogger(format: 'text' | 'json', verbosity: number, sink: LogSink): PinoLogger {
  const common = { level: levelFor(verbosity), base: undefined, serializers: { err: errString, error: errString } };
  if (format === 'json') {
    return pinoModule().pino(
      {
        ...common,
        // pino's level is left out (klog has none in JSON), so the timestamp opens the line: no leading comma.
        formatters: { level: () => ({}) },
        timestamp: () => `"ts":${nowMs()}`,
        mixin: (_context: object, level: number) => {
          const v = verbosityOf(level);
          return v === undefined ? {} : { v };
        },
      },
      { write: (line: string) => void sink.write(line) },
    );
  }
  return pinoModule().pino({ ...common, timestamp: () => `,"time":${nowMs()}` }, textDestination(sink));
}
