// The module the controller process (controller.js) and the baseline process (baseline.js) load their code from:
// the library and client-node's KubeConfig, built as the provisioner binaries are built (one bundle: the library's
// binaryBundle, @kprov/provisioner-lib/bundle),
// or, with `--unbundled`, imported from node_modules as an unbundled program imports them. Either way it exports the
// same names, and the parent passes its path in KPROV_BENCH_BINARY.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'tsup';
import { binaryBundle } from '../packages/provisioner-lib/dist/bundle.js';
import { LIB_PATH, libRequire } from './common.js';

/** What controller.js and baseline.js use. */
const NAMES = ['ProvisionController', 'setClientRateLimit', 'EVENT_RECORDER_DROPPED_EVENTS', 'describeError'];

/**
 * Writes the entry module into `dir` and, when `bundled`, bundles it there; returns the path of the module to load.
 * The entry names the library build in use (`KPROV_BENCH_LIB`, see common.js) and the client-node it imports.
 */
export async function provisionerBinary(dir, bundled) {
  const entry = join(dir, 'provisioner-entry.js');
  const clientNode = libRequire.resolve('@kubernetes/client-node');
  await writeFile(
    entry,
    `export { ${NAMES.join(', ')} } from ${JSON.stringify(LIB_PATH)};\n` +
      `export { KubeConfig } from ${JSON.stringify(clientNode)};\n`,
  );
  if (!bundled) return entry;
  await build({
    ...binaryBundle({ provisioner: entry }, { outDir: dir, silent: true, sourcemap: false }),
    config: false,
  });
  return join(dir, 'provisioner.js');
}
