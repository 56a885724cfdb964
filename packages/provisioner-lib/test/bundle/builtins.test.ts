/**
 * Node.js built-ins in a bundle built with `binaryBundle`: an entry that imports them as ES modules do (a name, the
 * default, the namespace) gets Node.js's own functions and objects, and reading one export does not run the others'
 * lazy loaders (a program that used `util.promisify` alone loaded 33 of Node.js's internal modules, `worker_threads`
 * among them, when `util` was copied whole).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { afterAll, expect, it } from 'vitest';
import { binaryBundle } from '../../src/bundle.js';

const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));
const work = path.join(PACKAGE, '.kprov', `builtins-test-${process.pid}`);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const ENTRY = `
import { promisify } from 'node:util';
import * as util from 'node:util';
import fs, { readFileSync } from 'node:fs';
import { request } from 'node:http';
const real = (name) => process.getBuiltinModule(name);
const sleep = promisify(setTimeout);
await sleep(1);
console.log(JSON.stringify({
  named: promisify === real('node:util').promisify && request === real('node:http').request,
  namespace: util.inspect === real('node:util').inspect && util.types === real('node:util').types,
  default: fs.readFileSync === readFileSync && readFileSync === real('node:fs').readFileSync,
  getter: fs.promises === real('node:fs').promises,
  loaded: process.moduleLoadList.filter((m) => /worker_threads|parse_args|util\\/diff|internal\\/undici/.test(m)),
}));
`;

it('imports of built-ins get their exports as they are, without running the lazy loaders of the others', async () => {
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(work, 'entry.mjs'), ENTRY);
  await build({
    ...binaryBundle({ entry: path.join(work, 'entry.mjs') }, { outDir: work }),
    config: false,
    silent: true,
  });
  const out = JSON.parse(execFileSync(process.execPath, [path.join(work, 'entry.js')], { encoding: 'utf8' }));
  expect(out).toEqual({ named: true, namespace: true, default: true, getter: true, loaded: [] });
}, 120_000);
