/**
 * What the program does when things are not as the walkthrough assumes, on the testkit: another node's PV, an
 * unknown StorageClass parameter, an unwritable PV directory, a lost Lease.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Testkit } from '@kprov/testkit';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { IDENTITY_ANNOTATION } from '../src/provisioner.js';
import {
  eventsFor,
  hostpathClaim,
  runMain,
  settle,
  startKit,
  storageClass,
  volumes,
  type RunningMain,
} from './helpers.js';

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  extraArgs: string[] = [],
): Promise<{ kit: Testkit; root: string; program: RunningMain; start: () => Promise<void> }> {
  const { kit, root, kubeconfig, stop } = await startKit();
  cleanups.push(stop);
  let program: RunningMain | undefined;
  const start = async (): Promise<void> => {
    program = runMain(
      ['--kubeconfig', kubeconfig, '--host-root', root, '--leader-election-namespace', 'default', ...extraArgs],
      {
        NODE_NAME: 'node-1',
      },
    );
    cleanups.push(() => program!.stop());
    await program.started;
  };
  return {
    kit,
    root,
    get program() {
      return program!;
    },
    start,
  };
}

/** A Released hostPath PV as this provisioner would have created it, with the given identity. */
function releasedVolume(name: string, identity: string): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      annotations: { [IDENTITY_ANNOTATION]: identity, 'pv.kubernetes.io/provisioned-by': 'example.com/hostpath' },
    },
    spec: {
      persistentVolumeReclaimPolicy: 'Delete',
      accessModes: ['ReadWriteMany'],
      capacity: { storage: '1Mi' },
      hostPath: { path: `/tmp/hostpath-provisioner/${name}`, type: 'Directory' },
      storageClassName: 'example-hostpath',
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: `claim-of-${name}`,
        uid: `uid-of-${name}`,
      },
    },
    status: { phase: 'Released' },
  };
}

function seedVolume(kit: Testkit, volume: V1PersistentVolume): void {
  kit.store.create('persistentvolumes', volume as unknown as Obj);
  kit.store.modify(
    'persistentvolumes',
    undefined,
    volume.metadata!.name!,
    (o) => {
      o.status = { phase: 'Released' };
    },
    { subresource: 'status' },
  );
}

describe('kprov-hostpath on the testkit', () => {
  it("leaves another node's volume alone: directory and PV kept, no VolumeFailedDelete", async () => {
    const env = await setup();
    const { kit, root } = env;
    kit.store.create('storage.k8s.io/storageclasses', storageClass() as unknown as Obj);
    const theirs = path.join(root, 'tmp/hostpath-provisioner/pvc-theirs');
    const ours = path.join(root, 'tmp/hostpath-provisioner/pvc-ours');
    for (const dir of [theirs, ours]) {
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'data'), 'x');
    }
    seedVolume(kit, releasedVolume('pvc-theirs', 'node-2'));
    seedVolume(kit, releasedVolume('pvc-ours', 'node-1'));
    await env.start();
    const { controller } = await env.program.started;

    // Our volume goes, which shows the volume queue has run.
    await vi.waitFor(() => {
      expect(volumes(kit).map((v) => v.metadata?.name)).not.toContain('pvc-ours');
      expect(existsSync(ours)).toBe(false);
    }, WAIT);
    await settle(controller);
    expect(volumes(kit).map((v) => v.metadata?.name)).toContain('pvc-theirs');
    expect(readdirSync(theirs)).toEqual(['data']);
    expect(eventsFor(kit, 'PersistentVolume', 'pvc-theirs')).toEqual([]);
    expect(eventsFor(kit, 'PersistentVolume', 'pvc-ours', 'VolumeFailedDelete')).toEqual([]);
  });

  it('fails a claim of a class with an unknown parameter, naming it, and creates nothing', async () => {
    const env = await setup();
    const { kit, root } = env;
    kit.store.create(
      'storage.k8s.io/storageclasses',
      storageClass('example-hostpath', { foo: 'bar' }) as unknown as Obj,
    );
    kit.store.create('persistentvolumeclaims', hostpathClaim() as unknown as Obj);
    await env.start();

    const event = await vi.waitFor(() => {
      const [e] = eventsFor(kit, 'PersistentVolumeClaim', 'hostpath-claim', 'ProvisioningFailed');
      expect(e).toBeDefined();
      return e!;
    }, WAIT);
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(
      'unknown StorageClass parameter "foo": the hostPath provisioner takes no parameters',
    );
    await settle((await env.program.started).controller);
    expect(volumes(kit)).toEqual([]);
    expect(existsSync(path.join(root, 'tmp/hostpath-provisioner'))).toBe(false);
  });

  it('fails a claim clearly when the PV directory cannot be created, and creates nothing', async () => {
    // Running as root makes permission-based setups unreliable; a regular file as parent fails for everyone.
    const env = await setup(['--pv-dir', '/srv/not-a-dir/volumes']);
    const { kit, root } = env;
    await mkdir(path.join(root, 'srv'), { recursive: true });
    await writeFile(path.join(root, 'srv/not-a-dir'), 'a regular file');
    kit.store.create('storage.k8s.io/storageclasses', storageClass() as unknown as Obj);
    const created = kit.store.create('persistentvolumeclaims', hostpathClaim() as unknown as Obj);
    await env.start();

    const event = await vi.waitFor(() => {
      const [e] = eventsFor(kit, 'PersistentVolumeClaim', 'hostpath-claim', 'ProvisioningFailed');
      expect(e).toBeDefined();
      return e!;
    }, WAIT);
    const pvName = `pvc-${String(created.metadata.uid)}`;
    expect(event.message).toContain(`cannot create volume directory "/srv/not-a-dir/volumes/${pvName}"`);
    expect(event.message).toContain('make sure the PV directory "/srv/not-a-dir/volumes" (--pv-dir, PV_DIR)');
    await settle((await env.program.started).controller);
    expect(volumes(kit)).toEqual([]);
    expect(statSync(path.join(root, 'srv/not-a-dir')).isFile()).toBe(true);
    expect(readdirSync(path.join(root, 'srv'))).toEqual(['not-a-dir']);
  });

  it('exits 1 when leadership is lost', async () => {
    // Real time, as users run it: a renew deadline a busy machine does not miss while the Lease is answered, short
    // enough for the test to see it missed once every Lease request fails.
    const env = await setup([
      '--leader-election-lease-duration=6s',
      '--leader-election-renew-deadline=5s',
      '--leader-election-retry-period=100ms',
    ]);
    await env.start();
    // Every Lease request fails from now on: renewals miss the deadline.
    env.kit.faults.add({ resource: ['leases', 'coordination.k8s.io/leases'], action: { type: 'error', code: 500 } });
    expect(await env.program.exited).toBe(1);
    expect(env.program.output()).toContain('Leader election lost, exiting');
  });
});
