// A smoke test of the built packages for the oldest supported Node.js (CI runs it with that version after the main
// run): imports every entry point each package exports, runs each binary with --help, and provisions and deletes
// one claim with a ProvisionController against the in-process testkit. Needs `pnpm build` first.
//
//   node .ci/smoke.js
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const started = performance.now();
const say = (message) => process.stdout.write(`smoke: ${message}\n`);

/** The published packages: name, folder and package.json. */
const packages = readdirSync(join(ROOT, 'packages')).map((dir) => {
  const folder = join(ROOT, 'packages', dir);
  return { folder, json: JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) };
});

/** `exports` entries as `[subpath, file]`, leaving out `./package.json`. */
function entryPoints(json) {
  return Object.entries(json.exports ?? {})
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => [subpath, typeof target === 'string' ? target : (target.import ?? target.default)]);
}

const loaded = new Map();
for (const { folder, json } of packages) {
  for (const [subpath, file] of entryPoints(json)) {
    const name = subpath === '.' ? json.name : `${json.name}/${subpath.slice(2)}`;
    const module = await import(pathToFileURL(join(folder, file)).href);
    if (Object.keys(module).length === 0) throw new Error(`${name} (${file}) exports nothing`);
    loaded.set(name, module);
  }
}
say(`imported ${[...loaded.keys()].join(', ')}`);

/** Runs `node <file> --help`; resolves with its output, rejects when it exits non-zero. */
function help(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${file} --help exited with ${code}:\n${output}`)),
    );
  });
}

for (const { folder, json } of packages) {
  for (const [bin, file] of Object.entries(json.bin ?? {})) {
    await help(join(folder, file));
    say(`${bin} --help`);
  }
}

const lib = loaded.get('@kprov/provisioner-lib');
const { startApiServer } = loaded.get('@kprov/testkit');
// client-node as the library resolves it, so that its classes are the ones the library checks against.
const libRequire = createRequire(join(ROOT, 'packages/provisioner-lib/package.json'));
const k8s = await import(pathToFileURL(libRequire.resolve('@kubernetes/client-node')).href);

async function until(what, check, timeoutMs = 20_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const kit = await startApiServer({ nodes: [], scheduler: false, kubelet: false });
const stop = new globalThis.AbortController();
let running;
try {
  const core = kit.kubeConfig.makeApiClient(k8s.CoreV1Api);
  await kit.kubeConfig.makeApiClient(k8s.StorageV1Api).createStorageClass({
    body: { metadata: { name: 'smoke' }, provisioner: 'example.com/smoke', reclaimPolicy: 'Delete' },
  });
  const backend = new Set();
  const controller = new lib.ProvisionController({
    kubeConfig: kit.kubeConfig,
    provisionerName: 'example.com/smoke',
    leaderElection: false,
    provisioner: {
      async provision({ pvName, pvc }) {
        backend.add(pvName);
        return {
          volume: {
            metadata: { name: pvName },
            spec: {
              persistentVolumeReclaimPolicy: 'Delete',
              accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
              capacity: { storage: '1Mi' },
              hostPath: { path: `/tmp/${pvName}` },
            },
          },
        };
      },
      async delete(volume) {
        backend.delete(volume.metadata?.name);
      },
    },
  });
  running = controller.run(stop.signal);
  await core.createNamespacedPersistentVolumeClaim({
    namespace: 'default',
    body: {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } }, storageClassName: 'smoke' },
    },
  });
  await until(
    'the claim to be Bound',
    async () =>
      (await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' })).status?.phase ===
      'Bound',
  );
  const pvName = (await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' })).spec
    ?.volumeName;
  say(`claim default/data Bound to ${pvName}`);
  await core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' });
  await until(
    'the volume to be deleted',
    async () => (await core.listPersistentVolume()).items.length === 0 && backend.size === 0,
  );
  say(`claim deleted, ${pvName} and its volume gone`);
} finally {
  stop.abort();
  await running;
  await kit.stop();
}
say(`passed on Node.js ${process.version} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
