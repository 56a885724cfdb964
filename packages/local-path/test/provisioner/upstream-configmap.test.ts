/**
 * A drop-in migration keeps upstream's `local-path-config`, whose `setup` (`mkdir -m 0777 -p "$VOL_DIR"`) and
 * `teardown` (`rm -rf "$VOL_DIR"`) follow any symbolic link on the way. The provisioner's own path guard still
 * refuses a path through a link below the base path, in both modes: a helper pod runs the guard before upstream's
 * script, node mode runs it in-process before its built-in behaviour or a custom script.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { describeTiers } from '@kprov/testkit/vitest';
import type { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { ObjectReader } from '@kprov/testkit';
import { expect, it, vi } from 'vitest';
import { nodeEnv } from '../node-mode/env.js';
import {
  BASE_PATH,
  claim,
  defaultConfig,
  eventsFor,
  getClaim,
  getVolume,
  perTest,
  provisioningFailure,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

/** `setup` of upstream's deploy/local-path-storage.yaml (v0.0.37), verbatim. */
const UPSTREAM_SETUP = '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"';
/** `teardown` of upstream's deploy/local-path-storage.yaml (v0.0.37), verbatim. */
const UPSTREAM_TEARDOWN = '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"';
/** `helperPod.yaml` of upstream's deploy/local-path-storage.yaml (v0.0.37), verbatim. */
const UPSTREAM_HELPER_POD_YAML = `apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  priorityClassName: system-node-critical
  tolerations:
    - key: node.kubernetes.io/disk-pressure
      operator: Exists
      effect: NoSchedule
  containers:
  - name: helper-pod
    image: docker.io/library/busybox
    imagePullPolicy: IfNotPresent`;
/** A setup node mode does not recognise as stock, so it runs as a child process (upstream's, plus a line). */
const CUSTOM_SETUP = `${UPSTREAM_SETUP}\necho "made $VOL_DIR"`;

/** Each volume in its own folder `<namespace>/<claim>`, as upstream's README suggests. */
const PATTERN = { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/' };
/** A folder below the claim's one, from the claim's annotation `sub`. */
const SUB_PATTERN = { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ .PVC.Annotations.sub }}' };

/** What the cases need of either mode. */
interface Cluster {
  read: ObjectReader;
  core: CoreV1Api;
  storage: StorageV1Api;
  /** Where a node path of node-1 is on this machine. */
  onNode: (nodePath: string) => string;
  /** How a refusal names a node path of node-1: helper pods see the node's disk where the simulated kubelet has it. */
  shown: (nodePath: string) => string;
}

const { env } = perTest();

/** The modes, each with upstream's ConfigMap: helper pods, and node mode with the stock scripts or a custom one. */
const MODES: [string, () => Promise<Cluster>][] = [
  [
    'with helper pods',
    async () => {
      const e = await env({
        config: defaultConfig(),
        setup: UPSTREAM_SETUP,
        teardown: UPSTREAM_TEARDOWN,
        helperPodYaml: UPSTREAM_HELPER_POD_YAML,
        retryMs: 500,
      });
      const onNode = (p: string): string => e.onNode('node-1', p);
      return { read: e.read, core: e.core, storage: e.storage, onNode, shown: onNode };
    },
  ],
  [
    'in node mode',
    async () => {
      const e = await nodeEnv({ scripts: { setup: UPSTREAM_SETUP, teardown: UPSTREAM_TEARDOWN }, retryMs: 500 });
      return { ...e, onNode: (p) => e.onNode('node-1', p), shown: (p) => p };
    },
  ],
  [
    'in node mode with a custom setup script',
    async () => {
      const e = await nodeEnv({ scripts: { setup: CUSTOM_SETUP, teardown: UPSTREAM_TEARDOWN }, retryMs: 500 });
      return { ...e, onNode: (p) => e.onNode('node-1', p), shown: (p) => p };
    },
  ],
];

/** Claim `name` of `className` (with annotation `sub` when given) and a pod `writer-<name>` writing into it. */
async function claimAndWriter(c: Cluster, name: string, className: string, sub?: string): Promise<void> {
  const body = claim(name, className);
  if (sub !== undefined) body.metadata!.annotations = { sub };
  await c.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body });
  await c.core.createNamespacedPod({
    namespace: 'default',
    body: volumeTestPod(name, `writer-${name}`, { 'kubernetes.io/hostname': 'node-1' }),
  });
}

/** Deletes the writer and the claim, and waits until the claim is gone. */
async function release(c: Cluster, name: string): Promise<void> {
  await c.core.deleteNamespacedPod({ name: `writer-${name}`, namespace: 'default' });
  await c.core.deleteNamespacedPersistentVolumeClaim({ name, namespace: 'default' });
  await vi.waitFor(async () => expect(await getClaim(c, name)).toBeUndefined(), WAIT);
}

/** A directory outside the base path on node-1's disk, with a file in it. */
function outsideDir(c: Cluster): string {
  const outside = c.onNode('/outside');
  mkdirSync(outside, { recursive: true });
  writeFileSync(`${outside}/keep`, 'keep');
  return outside;
}

/** The claim stays Pending, its Event says the path runs through `component` (a node path), a link to `outside`. */
async function expectRefused(c: Cluster, name: string, component: string, outside: string): Promise<void> {
  const message = await provisioningFailure(c, name);
  expect(message).toContain(`${c.shown(component)} is a symbolic link (to ${outside})`);
  expect(message).toContain('remove the link on the node');
  expect((await getClaim(c, name))?.status?.phase).toBe('Pending');
  expect(readdirSync(outside)).toEqual(['keep']);
}

describeTiers(
  "upstream's ConfigMap",
  () => {
    it.each(MODES)('%s: provisions and deletes as upstream does', async (_mode, start) => {
      const c = await start();
      await c.storage.createStorageClass({ body: storageClass('local-path', { parameters: PATTERN }) });
      await claimAndWriter(c, 'data', 'local-path');
      const pvName = await waitBound(c, 'data');
      await waitSucceeded(c, 'writer-data');
      expect((await getVolume(c, pvName))?.spec?.hostPath?.path).toBe(`${BASE_PATH}/default/data`);
      const dir = c.onNode(`${BASE_PATH}/default/data`);
      expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');
      expect(statSync(dir).mode & 0o777).toBe(0o777);
      expect(lstatSync(c.onNode(`${BASE_PATH}/default`)).isDirectory()).toBe(true);

      await release(c, 'data');
      await vi.waitFor(async () => {
        expect(await getVolume(c, pvName)).toBeUndefined();
        expect(existsSync(dir)).toBe(false);
      }, WAIT);
      expect(existsSync(c.onNode(`${BASE_PATH}/default`))).toBe(true);
    });

    it.each(MODES)(
      '%s: a retained directory replaced by a link to outside the base path is not used by a new claim',
      async (_mode, start) => {
        const c = await start();
        await c.storage.createStorageClass({
          body: storageClass('local-path-retain', { reclaimPolicy: 'Retain', parameters: PATTERN }),
        });
        const outside = outsideDir(c);
        await claimAndWriter(c, 'data', 'local-path-retain');
        await waitBound(c, 'data');
        await waitSucceeded(c, 'writer-data');
        await release(c, 'data');
        // The retained directory default/data becomes a link to /outside (as a pod with default/ mounted could do).
        const retained = c.onNode(`${BASE_PATH}/default/data`);
        renameSync(retained, `${retained}.old`);
        symlinkSync(outside, retained);

        // The same claim again: upstream's mkdir -p would take the link, and the pod would write into /outside.
        await claimAndWriter(c, 'data', 'local-path-retain');
        await expectRefused(c, 'data', `${BASE_PATH}/default/data`, outside);
      },
    );

    it.each(MODES)(
      '%s: a link a pod left in its retained volume is not followed by a new claim whose path runs through it',
      async (_mode, start) => {
        const c = await start();
        await c.storage.createStorageClass({
          body: storageClass('local-path-retain', { reclaimPolicy: 'Retain', parameters: SUB_PATTERN }),
        });
        const outside = outsideDir(c);
        // sub "" gives the directory default/data; its pod plants default/data/evil -> /outside.
        await claimAndWriter(c, 'data', 'local-path-retain', '');
        await waitBound(c, 'data');
        await waitSucceeded(c, 'writer-data');
        symlinkSync(outside, c.onNode(`${BASE_PATH}/default/data/evil`));
        await release(c, 'data');

        // sub "evil/new": upstream's mkdir -p would make /outside/new.
        await claimAndWriter(c, 'data', 'local-path-retain', 'evil/new');
        await expectRefused(c, 'data', `${BASE_PATH}/default/data/evil`, outside);
      },
    );

    it.each(
      MODES.slice(0, 2).flatMap(([mode, start]) =>
        (
          [
            ['directory', `${BASE_PATH}/default/data`],
            ['parent', `${BASE_PATH}/default`],
          ] as const
        ).map(([what, replaced]) => [mode, what, replaced, start] as const),
      ),
    )(
      '%s: teardown of a volume whose %s was replaced by a link to outside leaves the target alone and keeps the PV',
      async (_mode, _what, replaced, start) => {
        const c = await start();
        await c.storage.createStorageClass({ body: storageClass('local-path', { parameters: PATTERN }) });
        await claimAndWriter(c, 'data', 'local-path');
        const pvName = await waitBound(c, 'data');
        await waitSucceeded(c, 'writer-data');
        // /outside holds what the volume's path names through the link: upstream's rm -rf would remove it.
        const outside = outsideDir(c);
        mkdirSync(`${outside}/data`);
        writeFileSync(`${outside}/data/keep`, 'keep');
        const onNode = c.onNode(replaced);
        renameSync(onNode, `${onNode}.old`);
        symlinkSync(outside, onNode);

        await release(c, 'data');
        const message = await vi.waitFor(async () => {
          const [event] = await eventsFor(c, 'PersistentVolume', pvName, 'VolumeFailedDelete');
          if (event === undefined) throw new Error('no VolumeFailedDelete event yet');
          return event.message ?? '';
        }, WAIT);
        expect(message).toContain(`${c.shown(replaced)} is a symbolic link (to ${outside})`);
        expect(readFileSync(`${outside}/keep`, 'utf8')).toBe('keep');
        expect(readFileSync(`${outside}/data/keep`, 'utf8')).toBe('keep');
        expect(await getVolume(c, pvName)).toBeDefined();
      },
    );
  },
  // Not the node tier: the links name paths of this machine, which the simulated kubelet's processes resolve; in a
  // real helper container an absolute link target resolves inside the container (docs/testkit.md, fidelity).
  { tiers: ['testkit', 'real'] },
);
