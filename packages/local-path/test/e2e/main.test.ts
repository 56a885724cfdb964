/**
 * Upstream e2e scenarios that need the real program: `main()` in-process against either tier, reloading the
 * ConfigMap's `config.json` while running, and two replicas with leader election.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CoreV1Api } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { provisionOne, runMain, startKit, waitStarted, type Program } from '../main/harness.js';
import { BASE_PATH, eventsFor, NAMESPACE, WAIT } from '../provisioner/helpers.js';

async function setConfigJson(core: CoreV1Api, text: string): Promise<void> {
  const cm = await core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
  cm.data = { ...cm.data, 'config.json': text };
  await core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
}

describeTiers('main() end to end', () => {
  it('reloads config.json while running, and keeps the last good config with an InvalidConfig Warning on a bad update', async () => {
    const k = await startKit();
    const { core } = k;
    const program = runMain(k.kubeconfig, ['--leader-election=false']);
    const root = k.cluster.nodes[0]!.root;

    const first = await provisionOne(k, 'pvc-1');
    expect(first.nodePath).toBe(`${BASE_PATH}/${first.pvName}_default_pvc-1`);
    expect(readFileSync(path.join(root, first.nodePath, 'test'), 'utf8')).toBe('local-path-test\n');

    // A new base path: the next claim lands there.
    const newBase = '/var/local-path-new';
    const applied = program.count('Applied config');
    await setConfigJson(
      core,
      JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [newBase] }] }),
    );
    await vi.waitFor(async () => expect(program.count('Applied config')).toBe(applied + 1), WAIT);
    const second = await provisionOne(k, 'pvc-2');
    expect(second.nodePath).toBe(`${newBase}/${second.pvName}_default_pvc-2`);
    expect(readFileSync(path.join(root, second.nodePath, 'test'), 'utf8')).toBe('local-path-test\n');

    // A bad update: refused with a Warning Event on the ConfigMap; the config in force stays.
    await setConfigJson(core, '{"nodePathMap": [');
    await vi.waitFor(async () => {
      const events = await eventsFor(k, 'ConfigMap', 'local-path-config', 'InvalidConfig');
      expect(events).toHaveLength(1);
      expect(events[0]!.type).toBe('Warning');
    }, WAIT);
    const third = await provisionOne(k, 'pvc-3');
    expect(third.nodePath).toBe(`${newBase}/${third.pvName}_default_pvc-3`);
    expect(existsSync(path.join(root, third.nodePath, 'test'))).toBe(true);

    program.stop();
    expect(await program.exited).toBe(0);
  });

  it("writes all its Events through one recorder: the controller's, the Lease's and the refused config's have one source", async () => {
    const k = await startKit();
    const program = runMain(k.kubeconfig);
    await waitStarted(program);
    await provisionOne(k, 'pvc-1');
    await setConfigJson(k.core, '{"nodePathMap": [');
    await vi.waitFor(
      async () => expect(await eventsFor(k, 'ConfigMap', 'local-path-config', 'InvalidConfig')).toHaveLength(1),
      WAIT,
    );

    const [lease] = await k.read.leases(NAMESPACE);
    const identity = lease?.spec?.holderIdentity ?? '';
    expect(identity).not.toBe('');
    await vi.waitFor(async () => {
      const sources = new Map((await k.read.events()).map((e) => [e.reason ?? '', e.source?.component]));
      // One source, the Go library's `<provisioner name>_<identity>`, with the identity holding the Lease.
      expect(
        Object.fromEntries(
          ['Provisioning', 'ProvisioningSucceeded', 'LeaderElection', 'InvalidConfig'].map((r) => [r, sources.get(r)]),
        ),
      ).toEqual({
        Provisioning: `rancher.io/local-path_${identity}`,
        ProvisioningSucceeded: `rancher.io/local-path_${identity}`,
        LeaderElection: `rancher.io/local-path_${identity}`,
        InvalidConfig: `rancher.io/local-path_${identity}`,
      });
    }, WAIT);

    program.stop();
    expect(await program.exited).toBe(0);
  });

  it('with two replicas electing a leader, exactly one provisions', async () => {
    const k = await startKit();
    const a = runMain(k.kubeconfig);
    await waitStarted(a);
    const b = runMain(k.kubeconfig);
    // b is running and sees a's Lease, but does not start its workers.
    await vi.waitFor(async () => expect(b.messages()).toContain('Provisioner started'), WAIT);

    const { pvName, nodePath } = await provisionOne(k, 'pvc-1');
    expect(readFileSync(path.join(k.cluster.nodes[0]!.root, nodePath, 'test'), 'utf8')).toBe('local-path-test\n');
    const leases = await k.read.leases(NAMESPACE);
    expect(leases).toHaveLength(1);
    expect(await k.read.volumes()).toHaveLength(1);
    expect(b.started()).toBeUndefined();
    const creating = (p: Program): string[] => p.messages().filter((m) => m.startsWith(`Creating volume ${pvName}`));
    expect(creating(a)).toHaveLength(1);
    expect(creating(b)).toEqual([]);
  });
});
