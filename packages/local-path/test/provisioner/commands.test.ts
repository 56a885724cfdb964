/**
 * `setupCommand` and `teardownCommand` of `config.json` (upstream's distroless example): the helper container runs
 * exactly `[<command>]` with the arguments `-p <dir> -s <bytes> -m <mode> -a <create|delete>` and the `VOL_*`
 * environment, instead of `/bin/sh /script/<setup|teardown>`; with both set, no script volume is mounted.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeTiers } from '@kprov/testkit/vitest';
import { guardedCommand } from '../../src/volume/path-guard.js';
import { expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  defaultConfig,
  type Env,
  perTest,
  volumes,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

const { env: baseEnv, defer } = perTest();

/**
 * A stand-in for the distroless example's `/manager`: parses `-p -s -m -a`, refuses an empty path or `/`, creates or
 * removes the directory, and appends what it was given to `calls`.
 */
function manager(calls: string): string {
  return `#!/bin/sh
set -eu
while getopts "p:s:m:a:" opt; do
  case $opt in
    p) dir=$OPTARG ;; s) size=$OPTARG ;; m) mode=$OPTARG ;; a) action=$OPTARG ;; *) exit 2 ;;
  esac
done
case "$dir" in ''|/) echo "invalid path '$dir'" >&2; exit 1 ;; esac
echo "$action size=$size mode=$mode same-as-VOL_DIR=$([ "$dir" = "$VOL_DIR" ] && echo yes || echo no)" >> '${calls}'
case "$action" in
  create) mkdir -m 0777 -p "$dir" ;;
  delete) rm -rf "$dir" ;;
esac
`;
}

/** The manager written to a temporary directory, and an environment whose config names it. */
async function startWithManager(
  config: (command: string) => Record<string, unknown>,
  scripts: { setup?: string; teardown?: string } = {},
): Promise<{ e: Env; command: string; calls: string }> {
  const tools = await mkdtemp(path.join(tmpdir(), 'kprov-local-path-manager-'));
  defer(() => rm(tools, { recursive: true, force: true }));
  const command = path.join(tools, 'manager');
  const calls = path.join(tools, 'calls');
  await writeFile(command, manager(calls));
  await chmod(command, 0o755);
  const e = await baseEnv({ config: { ...defaultConfig(), ...config(command) }, ...scripts });
  return { e, command, calls };
}

describeTiers(
  'setupCommand and teardownCommand',
  () => {
    it("provisions and deletes through the configured command with upstream's arguments, and mounts no scripts", async () => {
      // The ConfigMap's scripts would fail: only the command may run.
      const { e, command, calls } = await startWithManager(
        (command) => ({ setupCommand: command, teardownCommand: command }),
        {
          setup: '#!/bin/sh\nexit 7\n',
          teardown: '#!/bin/sh\nexit 7\n',
        },
      );

      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const pvName = await waitBound(e);
      await waitSucceeded(e);
      const nodePath = `${BASE_PATH}/${pvName}_default_local-path-pvc`;
      const dir = e.onNode('node-1', nodePath);
      expect(readFileSync(path.join(dir, 'test'), 'utf8')).toBe('local-path-test\n');

      const [create] = e.helperPodsCreated;
      const container = create!.spec!.containers[0]!;
      expect(container.command).toEqual([command]);
      expect(container.args).toEqual(['-p', nodePath, '-s', '134217728', '-m', 'Filesystem', '-a', 'create']);
      // A real server's ServiceAccount admission adds its token volume (kube-api-access-*) to every pod.
      const ours = (name: string): boolean => !name.startsWith('kube-api-access-');
      expect(create!.spec!.volumes?.map((v) => v.name).filter(ours)).toEqual(['data']);
      expect(container.volumeMounts?.map((m) => m.name).filter(ours)).toEqual(['data']);

      await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      await vi.waitFor(async () => {
        expect(await volumes(e)).toEqual([]);
        expect(existsSync(dir)).toBe(false);
      }, WAIT);
      expect(e.helperPodsCreated[1]!.spec!.containers[0]!.command).toEqual([command]);
      expect(e.helperPodsCreated[1]!.spec!.containers[0]!.args?.at(-1)).toBe('delete');
      expect((await readFile(calls, 'utf8')).split('\n').filter((l) => l !== '')).toEqual([
        'create size=134217728 mode=Filesystem same-as-VOL_DIR=yes',
        'delete size=134217728 mode=Filesystem same-as-VOL_DIR=yes',
      ]);
    });

    it('runs the teardown script from the ConfigMap when only setupCommand is set', async () => {
      const { e, calls } = await startWithManager((command) => ({ setupCommand: command }));

      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const pvName = await waitBound(e);
      await waitSucceeded(e);
      const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
      // The create pod mounts only the teardown item of the ConfigMap (the one not overridden).
      expect(e.helperPodsCreated[0]!.spec!.volumes?.find((v) => v.name === 'script')?.configMap?.items).toEqual([
        { key: 'teardown', path: 'teardown' },
      ]);

      await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      await vi.waitFor(async () => expect(existsSync(dir)).toBe(false), WAIT);
      expect(e.helperPodsCreated[1]!.spec!.containers[0]!.command).toEqual(
        guardedCommand('delete', ['/bin/sh', '/script/teardown']),
      );
      expect((await readFile(calls, 'utf8')).trim()).toBe('create size=134217728 mode=Filesystem same-as-VOL_DIR=yes');
    });
  },
  // Not the node tier: there the command runs in the helper container, so it must be in the helper image (as in
  // upstream's distroless example); the simulated kubelet runs it on this machine, where the test writes it.
  { tiers: ['testkit', 'real'] },
);
