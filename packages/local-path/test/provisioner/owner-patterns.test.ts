/**
 * `userPattern`, `groupPattern` and `permPattern` (upstream v0.0.37): rendered from the claim into the setup helper
 * pod's `VOL_USER`, `VOL_GROUP` and `VOL_PERM`, which a setup script applies with chown and chmod (upstream's
 * `TestPodWithUserGroupPermPattern`). A pattern that does not parse or render, or renders something no chown or
 * chmod accepts, fails with a clear event before any helper pod runs.
 */
import { existsSync, statSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { ALL_TIERS, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  type Env,
  eventsFor,
  getVolume,
  perTest,
  provisioningFailure,
  storageClass,
  volumes,
  volumeTestPod,
  WAIT,
  waitBound,
  waitSucceeded,
} from './helpers.js';

const { env: baseEnv } = perTest();

/** Upstream's e2e setup script for these patterns: mkdir, then chown and chmod with the rendered values. */
const OWNER_SETUP =
  '#!/bin/sh\nset -eu\nmkdir -p "$VOL_DIR"\nchown "${VOL_USER}:${VOL_GROUP}" "$VOL_DIR"\nchmod "${VOL_PERM}" "$VOL_DIR"\n';

const PATTERNS = {
  userPattern: '{{ .PVC.Annotations.uid }}',
  groupPattern: '{{ .PVC.Annotations.gid }}',
  permPattern: '{{ .PVC.Annotations.perm }}',
};

/** Owner ids the test process can give away: any as root, else only its own. */
const asRoot = process.getuid?.() === 0;
const UID = asRoot ? 1000 : (process.getuid?.() ?? 0);
const GID = asRoot ? 2000 : (process.getgid?.() ?? 0);

async function env(): Promise<Env> {
  const e = await baseEnv({ setup: OWNER_SETUP });
  await e.storage.createStorageClass({ body: storageClass('local-path-perm-pattern', { parameters: PATTERNS }) });
  return e;
}

async function createClaim(e: Env, annotations: Record<string, string>): Promise<void> {
  const pvc = claim('local-path-pvc', 'local-path-perm-pattern');
  pvc.metadata!.annotations = annotations;
  await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: pvc });
  await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
}

async function expectNothingCreated(e: Env): Promise<void> {
  expect(e.helperPodsCreated).toEqual([]);
  expect(await volumes(e)).toEqual([]);
  expect(existsSync(e.onNode('node-1', BASE_PATH))).toBe(false);
}

function envOf(pod: V1Pod): Record<string, string> {
  return Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((v) => [v.name, v.value ?? '']));
}

describeTiers(
  'userPattern, groupPattern and permPattern',
  () => {
    it('renders the patterns from the claim into VOL_USER, VOL_GROUP and VOL_PERM, which the setup script applies', async () => {
      const e = await env();
      await createClaim(e, { uid: ` ${UID}`, gid: `${GID}\n`, perm: '0750' });

      const pvName = await waitBound(e);
      const [helper] = e.helperPodsCreated;
      // Rendered with the surrounding white space trimmed, as upstream.
      expect(envOf(helper!)).toMatchObject({ VOL_USER: `${UID}`, VOL_GROUP: `${GID}`, VOL_PERM: '0750' });
      const dir = e.onNode('node-1', (await getVolume(e, pvName))!.spec!.hostPath!.path);
      const stat = statSync(dir);
      expect({ mode: stat.mode & 0o7777, uid: stat.uid, gid: stat.gid }).toEqual({ mode: 0o750, uid: UID, gid: GID });
      await waitSucceeded(e);

      // The teardown helper pod gets them empty.
      await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      await vi.waitFor(async () => expect(existsSync(dir)).toBe(false), WAIT);
      expect(envOf(e.helperPodsCreated[1]!)).toMatchObject({ VOL_USER: '', VOL_GROUP: '', VOL_PERM: '' });
    });

    it('accepts a symbolic chmod mode', async () => {
      const e = await env();
      await createClaim(e, { uid: `${UID}`, gid: `${GID}`, perm: 'u=rwx,g=rx,o=' });
      const pvName = await waitBound(e);
      const dir = e.onNode('node-1', (await getVolume(e, pvName))!.spec!.hostPath!.path);
      expect(statSync(dir).mode & 0o7777).toBe(0o750);
    });

    it('fails with the pattern and the missing key when the claim lacks an annotation the pattern reads', async () => {
      const e = await env();
      await createClaim(e, { uid: `${UID}`, perm: '0750' });
      const message = await provisioningFailure(e);
      expect(message).toMatch(/^failed to create group from pattern \{\{ \.PVC\.Annotations\.gid \}\}: .*gid/);
      await expectNothingCreated(e);
    });

    it('fails with the pattern when it does not parse', async () => {
      const e = await env();
      await e.storage.createStorageClass({
        body: storageClass('local-path-broken', { parameters: { permPattern: '{{ .PVC.Annotations.perm' } }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-broken'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
      const message = await provisioningFailure(e);
      expect(message).toMatch(/^failed to create perm from pattern \{\{ \.PVC\.Annotations\.perm: /);
      await expectNothingCreated(e);
    });

    it('refuses a rendered mode that chmod would refuse, before creating the directory', async () => {
      const e = await env();
      await createClaim(e, { uid: `${UID}`, gid: `${GID}`, perm: '0758' });
      const message = await provisioningFailure(e);
      expect(message).toContain('permPattern');
      expect(message).toContain('"0758"');
      expect(message).toContain('chmod');
      await expectNothingCreated(e);
    });

    it('refuses a rendered user or group with white space or a colon inside, before creating the directory', async () => {
      const e = await env();
      await createClaim(e, { uid: '1000 2000', gid: `${GID}`, perm: '0750' });
      const message = await provisioningFailure(e);
      expect(message).toContain('userPattern');
      expect(message).toContain('"1000 2000"');
      await expectNothingCreated(e);

      await e.core.deleteNamespacedPod({ name: 'volume-test', namespace: 'default' });
      await e.core.deleteNamespacedPersistentVolumeClaim({ name: 'local-path-pvc', namespace: 'default' });
      await vi.waitFor(async () => expect(await e.read.claims('default')).toEqual([]), WAIT);
      await createClaim(e, { uid: `${UID}`, gid: 'staff:wheel', perm: '0750' });
      await vi.waitFor(async () => {
        const messages = (await eventsFor(e, 'PersistentVolumeClaim', 'local-path-pvc', 'ProvisioningFailed')).map(
          (ev) => ev.message ?? '',
        );
        expect(messages.some((m) => m.includes('groupPattern') && m.includes('"staff:wheel"'))).toBe(true);
      }, WAIT);
      await expectNothingCreated(e);
    });
  },
  { tiers: ALL_TIERS },
);
