/**
 * Data safety on both tiers: a forged PV cannot make teardown remove another claim's data, an edited node annotation
 * cannot send teardown to another node, a symbolic link left in a retained volume cannot move a new volume out of
 * the base path, a path with control characters or an over-long component is refused before any helper pod exists,
 * and helper pods carry no service account token. (A failed helper pod whose log cannot be read: test/main/rbac.test.ts.)
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { ALL_TIERS, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { SELECTED_NODE_ANNOTATION } from '../../src/volume/annotations.js';
import {
  BASE_PATH,
  claim,
  type Env,
  eventsFor,
  getClaim,
  getVolume,
  HELPER_POD_YAML,
  perTest,
  forgedVolume,
  provisioningFailure,
  settle,
  storageClass,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

const { env } = perTest();

/** A pathPattern built from a claim annotation, as the issue's examples use. */
const SUB_PATTERN = '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ .PVC.Annotations.sub }}';

/** A pod of claim `claimName` that runs `script` with the volume at /data. */
function podRunning(name: string, claimName: string, script: string): ReturnType<typeof volumeTestPod> {
  const pod = volumeTestPod(claimName, name);
  pod.spec!.containers[0]!.command = ['sh', '-c', script];
  return pod;
}

/** Provisions `local-path-pvc` with a pod writing into it; returns the PV name and the directory on node-1's disk. */
async function liveVolume(e: Env): Promise<{ pvName: string; dir: string; nodePath: string }> {
  await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
  await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
  const pvName = await waitBound(e);
  await waitSucceeded(e);
  const nodePath = (await getVolume(e, pvName))!.spec!.hostPath!.path;
  return { pvName, nodePath, dir: e.onNode('node-1', nodePath) };
}

/** The message of the first Warning Event with `reason` about PV `name`. */
async function volumeWarning(e: Env, name: string, reason: string): Promise<string> {
  return vi.waitFor(async () => {
    const [event] = await eventsFor(e, 'PersistentVolume', name, reason);
    if (event === undefined) throw new Error(`no ${reason} event for ${name} yet`);
    expect(event.type).toBe('Warning');
    return event.message ?? '';
  }, WAIT);
}

/** Records the provisioner's warnings as Events on the PV, as main() does. */
function recordWarnings(e: Env): void {
  const seen = e.warnings.length;
  let index = seen;
  const timer = setInterval(() => {
    for (; index < e.warnings.length; index++) {
      const w = e.warnings[index]!;
      void getVolume(e, w.pv)
        .then((pv) =>
          e.core.createNamespacedEvent({
            namespace: 'default',
            body: {
              metadata: { generateName: `${w.pv}.` },
              // The PV's uid, as the provisioner's recorder gives it (Events are looked up by it).
              involvedObject: { kind: 'PersistentVolume', apiVersion: 'v1', name: w.pv, uid: pv?.metadata?.uid },
              type: 'Warning',
              reason: w.reason,
              message: w.message,
              source: { component: 'local-path-provisioner' },
            },
          }),
        )
        .catch(() => undefined);
    }
  }, 20);
  perTest().defer(() => clearInterval(timer));
}

describeTiers('a forged PV', () => {
  it.each([
    ['the base path, parent of a live volume', (_live: string) => BASE_PATH],
    ['a directory outside every base path', (_live: string) => '/etc'],
    [
      'a path of the right shape under the base path but for another PV',
      (live: string) => `${BASE_PATH}/${live.split('/').pop()!}`,
    ],
  ])(
    'pointing at %s is refused: a Warning names the path, the PV is kept, nothing is removed',
    async (_what, pathOf) => {
      const e = await env();
      recordWarnings(e);
      await e.storage.createStorageClass({ body: storageClass() });
      const live = await liveVolume(e);
      const path = pathOf(live.nodePath);

      await e.core.createPersistentVolume({ body: forgedVolume('forged', path) });
      await vi.waitFor(async () => expect((await getVolume(e, 'forged'))?.status?.phase).toBe('Released'), WAIT);
      const message = await volumeWarning(e, 'forged', 'VolumeDeletionRefused');
      expect(message).toContain(`refusing to remove ${JSON.stringify(path)} for volume forged`);
      await settle(e.controller);
      expect(await getVolume(e, 'forged')).toBeDefined();
      expect(readFileSync(`${live.dir}/test`, 'utf8')).toBe('local-path-test\n');
      expect([...e.helperPods].filter((p) => p.startsWith('helper-pod-delete-'))).toEqual([]);
    },
  );

  it("naming a live claim of a pathPattern class, at that claim's directory, is refused", async () => {
    const e = await env();
    recordWarnings(e);
    await e.storage.createStorageClass({
      body: storageClass('local-path', { parameters: { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/' } }),
    });
    const live = await liveVolume(e);
    expect(live.nodePath).toBe(`${BASE_PATH}/default/local-path-pvc`);

    // The claim exists, with another uid: the PV controller releases the forged volume.
    await e.core.createPersistentVolume({ body: forgedVolume('forged', live.nodePath, 'local-path-pvc') });
    const message = await volumeWarning(e, 'forged', 'VolumeDeletionRefused');
    expect(message).toContain(`it holds the volume of PV ${live.pvName}`);
    expect(readFileSync(`${live.dir}/test`, 'utf8')).toBe('local-path-test\n');
  });
});

describeTiers('the node of a volume', () => {
  it('comes from the node affinity: an edited selected-node annotation does not move the teardown', async () => {
    const e = await env({ nodes: [{ name: 'node-1' }, { name: 'node-2' }] });
    await e.storage.createStorageClass({ body: storageClass() });
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
    await e.core.createNamespacedPod({
      namespace: 'default',
      body: volumeTestPod('local-path-pvc', 'volume-test', { 'kubernetes.io/hostname': 'node-1' }),
    });
    const pvName = await waitBound(e);
    await waitSucceeded(e);
    const dir = e.onNode('node-1', `${BASE_PATH}/${pvName}_default_local-path-pvc`);
    expect(existsSync(dir)).toBe(true);

    // kubectl annotate pv --overwrite local.path.provisioner/selected-node=node-2
    const pv = (await getVolume(e, pvName))!;
    pv.metadata!.annotations![SELECTED_NODE_ANNOTATION] = 'node-2';
    await e.core.replacePersistentVolume({ name: pvName, body: pv });
    await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });

    await vi.waitFor(async () => {
      expect(await getVolume(e, pvName)).toBeUndefined();
      expect(existsSync(dir)).toBe(false);
    }, WAIT);
    const teardown = e.helperPodsCreated.find((p) => p.metadata?.name === `helper-pod-delete-${pvName}`);
    expect(teardown?.spec?.nodeName).toBe('node-1');
    expect(e.warnings).toEqual([
      {
        pv: pvName,
        reason: 'VolumeNodeMismatch',
        message: expect.stringContaining(`${SELECTED_NODE_ANNOTATION}=node-2`) as unknown,
      },
    ]);
  });
});

describeTiers(
  'a symbolic link left in a retained volume',
  () => {
    it('cannot send a new volume outside the base path: setup refuses the path', async () => {
      const e = await env({ retryMs: 500 });
      await e.storage.createStorageClass({
        body: storageClass('local-path-retain', { reclaimPolicy: 'Retain', parameters: { pathPattern: SUB_PATTERN } }),
      });
      const elsewhere = e.onNode('node-1', '/elsewhere');
      mkdirSync(elsewhere, { recursive: true });
      // sub "" gives the directory default/local-path-pvc; its pod plants default/local-path-pvc/evil -> /elsewhere.
      const first = claim('local-path-pvc', 'local-path-retain');
      first.metadata!.annotations = { sub: '' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: first });
      await e.core.createNamespacedPod({
        namespace: 'default',
        body: podRunning('planter', 'local-path-pvc', `ln -s ${elsewhere} /data/evil`),
      });
      await waitBound(e);
      await waitSucceeded(e, 'planter');
      await e.core.deleteNamespacedPod({ name: 'planter', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      await vi.waitFor(async () => expect(await getClaim(e, 'local-path-pvc')).toBeUndefined(), WAIT);

      // The same claim again, with sub "evil": its path goes through the link.
      const second = claim('local-path-pvc', 'local-path-retain');
      second.metadata!.annotations = { sub: 'evil' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: second });
      await e.core.createNamespacedPod({
        namespace: 'default',
        body: podRunning('writer', 'local-path-pvc', 'echo escaped > /data/x'),
      });
      const message = await provisioningFailure(e);
      expect(message).toContain(`refusing ${e.onNode('node-1', `${BASE_PATH}/default/local-path-pvc/evil`)}`);
      expect(message).toContain(`is a symbolic link (to ${elsewhere})`);
      expect((await getClaim(e, 'local-path-pvc'))?.status?.phase).toBe('Pending');
      expect(readdirSync(elsewhere)).toEqual([]);
    });

    it('cannot make teardown follow it', async () => {
      const e = await env();
      await e.storage.createStorageClass({
        body: storageClass('local-path', { parameters: { pathPattern: SUB_PATTERN } }),
      });
      const elsewhere = e.onNode('node-1', '/elsewhere');
      mkdirSync(`${elsewhere}/x`, { recursive: true });
      const c = claim();
      c.metadata!.annotations = { sub: 'vol' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: c });
      // The pod swaps its own directory for a link to /elsewhere/x through its parent.
      await e.core.createNamespacedPod({
        namespace: 'default',
        body: podRunning('swapper', 'local-path-pvc', `cd /data/.. && rm -rf vol && ln -s ${elsewhere}/x vol`),
      });
      const pvName = await waitBound(e);
      await waitSucceeded(e, 'swapper');
      await e.core.deleteNamespacedPod({ name: 'swapper', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      const [event] = await vi.waitFor(async () => {
        const events = await eventsFor(e, 'PersistentVolume', pvName, 'VolumeFailedDelete');
        if (events.length === 0) throw new Error('no VolumeFailedDelete yet');
        return events;
      }, WAIT);
      expect(event?.message).toContain(`is a symbolic link (to ${elsewhere}/x)`);
      expect(existsSync(`${elsewhere}/x`)).toBe(true);
    });
  },
  // Not the node tier: the links here name a path of this machine, which the simulated kubelet's processes resolve;
  // in a real helper container an absolute link target resolves inside the container (docs/testkit.md, fidelity).
  { tiers: ['testkit', 'real'] },
);

describeTiers('a pathPattern volume whose StorageClass was deleted first', () => {
  it('is still deleted, as upstream deletes it without reading the class', async () => {
    const e = await env();
    await e.storage.createStorageClass({
      body: storageClass('local-path', { parameters: { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/' } }),
    });
    const { pvName, nodePath, dir } = await liveVolume(e);
    expect(nodePath).toBe(`${BASE_PATH}/default/local-path-pvc`);
    expect(readFileSync(`${dir}/test`, 'utf8')).toBe('local-path-test\n');

    await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
    await e.storage.deleteStorageClass({ name: 'local-path' });
    await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
    await vi.waitFor(async () => {
      expect(await getVolume(e, pvName)).toBeUndefined();
      expect(existsSync(dir)).toBe(false);
    }, WAIT);
    expect(await eventsFor(e, 'PersistentVolume', pvName, 'VolumeDeletionRefused')).toEqual([]);
  });
});

describeTiers('a volume path', () => {
  it.each([
    ['a newline', 'a\nb', 'control character'],
    ['a NUL', 'a\u0000b', 'control character'],
    ['a component longer than 255 bytes', 'é'.repeat(130), 'more than the 255 a file name may have'],
  ])('with %s is refused before any helper pod exists, naming the claim field', async (_what, sub, problem) => {
    const e = await env();
    await e.storage.createStorageClass({
      body: storageClass('local-path', { parameters: { pathPattern: SUB_PATTERN } }),
    });
    const c = claim();
    c.metadata!.annotations = { sub };
    await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: c });
    await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
    const message = await provisioningFailure(e);
    expect(message).toContain(problem);
    expect(message).toContain(`from the claim's metadata.annotations["sub"]`);
    expect(e.helperPods.size).toBe(0);
  });
});

describeTiers(
  'helper pods',
  () => {
    it('carry no service account token unless the template asks for one', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass() });
      await liveVolume(e);
      const [setup] = e.helperPodsCreated;
      expect(setup?.spec?.automountServiceAccountToken).toBe(false);
      // A real server adds the token volume (kube-api-access-*) only when the token is mounted.
      expect((setup?.spec?.volumes ?? []).map((v) => v.name)).toEqual(['data', 'script']);
      expect(setup?.metadata?.labels).toMatchObject({ 'local.path.provisioner/operation': 'create' });
    });

    it('keep the token when the template sets automountServiceAccountToken: true', async () => {
      const e = await env({
        helperPodYaml: HELPER_POD_YAML.replace('spec:\n', 'spec:\n  automountServiceAccountToken: true\n'),
      });
      await e.storage.createStorageClass({ body: storageClass() });
      await liveVolume(e);
      const [setup] = e.helperPodsCreated;
      expect(setup?.spec?.automountServiceAccountToken).toBe(true);
      if (e.cluster.controlPlane !== undefined)
        expect((setup?.spec?.volumes ?? []).map((v) => v.name)).toContainEqual(
          expect.stringMatching(/^kube-api-access-/),
        );
    });
  },
  { tiers: ALL_TIERS },
);

describeTiers(
  'the helper pod reconciler',
  () => {
    it('deletes, on its periodic pass, a leftover helper pod that no operation uses', async () => {
      const e = await env({ reconcileIntervalMs: 200 });
      // Once the first pass ran at start-up, a teardown pod left by an earlier process appears.
      await new Promise((r) => setTimeout(r, 300));
      await e.core.createNamespacedPod({
        namespace: 'local-path-storage',
        body: {
          metadata: {
            name: 'helper-pod-delete-pvc-leftover',
            labels: { 'local.path.provisioner/operation': 'delete' },
            annotations: { 'local.path.provisioner/volume': 'pvc-leftover' },
          },
          spec: {
            nodeName: 'node-1',
            restartPolicy: 'Never',
            containers: [
              {
                name: 'helper-pod',
                image: 'busybox',
                imagePullPolicy: 'IfNotPresent',
                command: ['sh', '-c', 'sleep 30'],
              },
            ],
          },
        },
      });
      await vi.waitFor(
        async () => expect((await e.read.pods('local-path-storage')).map((p) => p.metadata?.name)).toEqual([]),
        WAIT,
      );
    });
  },
  { tiers: ALL_TIERS },
);
