/**
 * Provisioning failures (the controller, a port of the Go library v13, writes the provisioner's message as the
 * event message) on the testkit: each ends in a clear `ProvisioningFailed` event, and nothing is left
 * behind (no helper pod, no directory, no PV).
 */
import { existsSync } from 'node:fs';
import { ALL_TIERS, currentTier, describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import {
  BASE_PATH,
  claim,
  type Env,
  helperPodsNow,
  perTest,
  provisioningFailure,
  storageClass,
  volumes,
  volumeTestPod,
  WAIT,
} from './helpers.js';

const { env } = perTest();

/** Nothing was created: no PV, no base directory on the node, no helper pod ever. */
async function expectNothingCreated(e: Env): Promise<void> {
  expect(await volumes(e)).toEqual([]);
  expect(existsSync(e.onNode('node-1', BASE_PATH))).toBe(false);
  expect([...e.helperPods]).toEqual([]);
}

describeTiers(
  'provisioning failures',
  () => {
    it('fails at once when the setup script fails, with its last log lines, and removes the helper pod', async () => {
      const lines = Array.from({ length: 12 }, (_, i) => `echo "setup line ${i + 1}"`).join('\n');
      // A timeout far beyond the wait below: the event can only come from noticing the Failed pod.
      const e = await env({
        cmdTimeoutSeconds: 3600,
        setup: `#!/bin/sh\nset -eu\n${lines}\necho "disk full" >&2\nexit 3\n`,
      });
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const message = await provisioningFailure(e);
      expect(message).toMatch(
        /^failed to create volume pvc-[0-9a-f-]+: helper pod local-path-storage\/helper-pod-create-pvc-[0-9a-f-]+ failed: container helper-pod exited with code 3/,
      );
      const tail = message.split('last 10 log lines:\n')[1]?.split('\n') ?? [];
      expect(tail).toHaveLength(10);
      // The script's stdout, in its order, up to its last line; stderr's line among them.
      const stdout = tail.filter((line) => line !== 'disk full');
      expect(stdout.at(-1)).toBe('setup line 12');
      const first = Number(stdout[0]?.replace('setup line ', ''));
      expect(stdout).toEqual(Array.from({ length: stdout.length }, (_, i) => `setup line ${first + i}`));
      // A real node's log has each stream's lines in order, but the two streams' lines in the order containerd read
      // them: the stderr line, written last, may come before stdout's last lines (docs/testkit.md, fidelity table).
      if (currentTier().name === 'node') expect(tail.length - stdout.length).toBeLessThanOrEqual(1);
      else expect(tail.at(-1)).toBe('disk full');
      expect(message).not.toContain('timeout');
      expect(e.helperPods.size).toBeGreaterThan(0);
      await vi.waitFor(async () => expect(await helperPodsNow(e)).toEqual([]), WAIT);
      expect(await volumes(e)).toEqual([]);
    });

    it('rejects a pathPattern that climbs out of the claim directory before creating anything', async () => {
      const e = await env();
      await e.storage.createStorageClass({
        body: storageClass('local-path-traversal', {
          parameters: { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/../../other/pvc' },
        }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-traversal'),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const message = await provisioningFailure(e);
      expect(message).toBe(
        'failed to create path from pattern ' +
          '{{ .PVC.Namespace }}/{{ .PVC.Name }}/../../other/pvc: folder path contains invalid references: default/local-path-pvc/../../other/pvc',
      );
      await expectNothingCreated(e);
    });

    it('rejects a Block claim with a clear event', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass() });
      const block = claim('block-pvc', 'local-path', { volumeMode: 'Block' });
      block.metadata!.annotations = { 'volume.kubernetes.io/selected-node': 'node-1' };
      await e.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: block });

      expect(await provisioningFailure(e, 'block-pvc')).toBe(
        'rancher.io/local-path does not support block volume provisioning',
      );
      await expectNothingCreated(e);
    });

    it('rejects an Immediate class without a selected node with upstream message and a hint', async () => {
      const e = await env();
      await e.storage.createStorageClass({
        body: storageClass('local-path-immediate', { volumeBindingMode: 'Immediate' }),
      });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path-immediate'),
      });

      const message = await provisioningFailure(e);
      expect(message).toMatch(
        /^configuration error, no node was specified; StorageClass "local-path-immediate" binds Immediate/,
      );
      expect(message).toContain('WaitForFirstConsumer');
      await expectNothingCreated(e);
    });

    it('rejects ReadWriteMany on a node-local class', async () => {
      const e = await env();
      await e.storage.createStorageClass({ body: storageClass() });
      await e.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: claim('local-path-pvc', 'local-path', { accessModes: ['ReadWriteMany'] }),
      });
      await e.core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });

      const message = await provisioningFailure(e);
      expect(message).toContain('NodePath only supports ReadWriteOnce and ReadWriteOncePod (1.22+) access modes');
      expect(message).toContain('ReadWriteMany');
      await expectNothingCreated(e);
    });
  },
  { tiers: ALL_TIERS },
);
