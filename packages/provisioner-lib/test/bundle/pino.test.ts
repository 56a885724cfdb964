/**
 * pino in a bundle built with `binaryBundle`: a logger with a destination of its own (the runtime's) writes its lines
 * without loading pino's file and thread writers, or Node.js's `assert` and `worker_threads` through them; a pino
 * logger writing to a file of its own (pino's `SonicBoom`) still gets one, loading them then.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { afterAll, expect, it } from 'vitest';
import { binaryBundle } from '../../src/bundle.js';

const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));
const work = path.join(PACKAGE, '.kprov', `pino-test-${process.pid}`);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const entry = (file: string): string => `
import { pino } from 'pino';
import { createLogger } from ${JSON.stringify(path.join(PACKAGE, 'dist/pino.js'))};
const lines = [];
createLogger('text', 0, { write: (line) => lines.push(line) }).info({ volume: 'pv-1' }, 'cleaned');
const loaded = () => process.moduleLoadList.filter((m) => /^NativeModule (assert|worker_threads)$/.test(m));
const before = loaded();
// pino writing to a file through its own SonicBoom (pino.destination), as a program not on the runtime may.
// Asynchronous, as pino's default: on the main thread (worker_threads' isMainThread) pino flushes it at exit.
const destination = pino.destination({ dest: ${JSON.stringify(file)}, sync: false });
await new Promise((resolve) => destination.once('ready', resolve));
pino({ base: undefined }, destination).info('to a file');
console.log(JSON.stringify({ lines, before, after: loaded(), flushSync: typeof destination.flushSync }));
`;

it("a logger with its own destination loads none of pino's writers; pino's file destination still works", async () => {
  mkdirSync(work, { recursive: true });
  const file = path.join(work, 'pino.log');
  writeFileSync(path.join(work, 'entry.mjs'), entry(file));
  await build({
    ...binaryBundle({ entry: path.join(work, 'entry.mjs') }, { outDir: work }),
    config: false,
    silent: true,
  });
  const out = JSON.parse(execFileSync(process.execPath, [path.join(work, 'entry.js')], { encoding: 'utf8' })) as {
    lines: string[];
    before: string[];
    after: string[];
    flushSync: string;
  };
  expect(out.lines).toHaveLength(1);
  expect(out.lines[0]).toMatch(/^I\d{4} [\d:.]+ +\d+\] "cleaned" volume="pv-1"\n$/);
  expect(out.before).toEqual([]);
  expect(out.flushSync).toBe('function');
  expect(out.after).toEqual(['NativeModule assert', 'NativeModule worker_threads']);
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ level: 30, msg: 'to a file' });
}, 120_000);
