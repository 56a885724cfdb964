/** HostPathProvisioner on its own: directories on disk, PV shape, the delete rules. */
import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { IgnoredError, InfeasibleError, type ProvisionOptions } from '@kprov/provisioner-lib';
import type { V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HostPathProvisioner, IDENTITY_ANNOTATION } from '../src/provisioner.js';
import { hostpathClaim, tempDir } from './helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('kprov-hostpath-unit-'));
});
afterEach(async () => cleanup());

const PV_DIR = '/tmp/hostpath-provisioner';

function options(overrides: Partial<ProvisionOptions> = {}, klass: Partial<V1StorageClass> = {}): ProvisionOptions {
  return {
    pvName: 'pvc-1',
    pvc: hostpathClaim(),
    storageClass: { metadata: { name: 'example-hostpath' }, provisioner: 'example.com/hostpath', ...klass },
    selectedNodeName: '',
    ...overrides,
  };
}

/** A PV as provisioned on `identity` (null: without the identity annotation). */
function ourVolume(
  name: string,
  nodePath = `${PV_DIR}/${name}`,
  identity: string | null = 'node-1',
): V1PersistentVolume {
  return {
    metadata: { name, annotations: identity === null ? {} : { [IDENTITY_ANNOTATION]: identity } },
    spec: { hostPath: { path: nodePath } },
  };
}

describe('HostPathProvisioner.provision', () => {
  it('creates a 0777 directory whatever the umask and returns the PV for it', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    const { volume } = await p.provision(options());
    const dir = path.join(root, PV_DIR, 'pvc-1');
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o777);
    expect(volume).toEqual({
      metadata: { name: 'pvc-1', annotations: { [IDENTITY_ANNOTATION]: 'node-1' } },
      spec: {
        persistentVolumeReclaimPolicy: 'Delete',
        accessModes: ['ReadWriteMany'],
        capacity: { storage: '1Mi' },
        hostPath: { path: `${PV_DIR}/pvc-1`, type: 'Directory' },
      },
    });
  });

  it('is idempotent and keeps what is already in the directory', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    await p.provision(options());
    await writeFile(path.join(root, PV_DIR, 'pvc-1', 'data'), 'x');
    await p.provision(options());
    expect(await readdir(path.join(root, PV_DIR, 'pvc-1'))).toEqual(['data']);
  });

  it('takes the reclaim policy from the class and honours pvDir', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root, pvDir: '/var/lib/volumes/' });
    const { volume } = await p.provision(options({}, { reclaimPolicy: 'Retain' }));
    expect(volume.spec?.persistentVolumeReclaimPolicy).toBe('Retain');
    expect(volume.spec?.hostPath?.path).toBe('/var/lib/volumes/pvc-1');
    expect(existsSync(path.join(root, 'var/lib/volumes/pvc-1'))).toBe(true);
  });

  it('rejects StorageClass parameters, naming them, as infeasible, and creates nothing', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    const err = await p.provision(options({}, { parameters: { foo: 'bar' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InfeasibleError);
    expect((err as Error).message).toBe(
      'unknown StorageClass parameter "foo": the hostPath provisioner takes no parameters',
    );
    await expect(p.provision(options({}, { parameters: { zeta: '1', alpha: '2' } }))).rejects.toThrow(
      'unknown StorageClass parameters "alpha", "zeta": the hostPath provisioner takes no parameters',
    );
    expect(await readdir(root)).toEqual([]);
  });

  it('fails with the path and what to do when pvDir cannot be created, leaving nothing behind', async () => {
    await writeFile(path.join(root, 'file'), '');
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root, pvDir: '/file/volumes' });
    const err = await p.provision(options()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      new RegExp(
        '^cannot create volume directory "/file/volumes/pvc-1" \\(at ".*/file/volumes/pvc-1" in this process\\): ENOTDIR.*; ' +
          'make sure the PV directory "/file/volumes" \\(--pv-dir, PV_DIR\\) is, or can be created as, a writable directory on the node$',
      ),
    );
    expect(await readdir(root)).toEqual(['file']);
  });

  it('refuses PV names that are not a single path segment', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    for (const pvName of ['..', 'a/b', '']) {
      await expect(p.provision(options({ pvName }))).rejects.toThrow('cannot be used as a directory name');
    }
    expect(await readdir(root)).toEqual([]);
  });

  it('rejects invalid options', () => {
    expect(() => new HostPathProvisioner({ identity: 'node-1', pvDir: 'relative' })).toThrow(
      'pvDir must be an absolute path',
    );
    expect(() => new HostPathProvisioner({ identity: 'node-1', pvDir: '/' })).toThrow('pvDir must not be "/"');
    expect(() => new HostPathProvisioner({ identity: '' })).toThrow('identity (the node name) is required');
    expect(() => new HostPathProvisioner({ identity: 'n', hostRoot: 'host' })).toThrow(
      'hostRoot must be an absolute path',
    );
  });
});

describe('HostPathProvisioner.delete', () => {
  it('removes the directory of our volume, and succeeds when it is already gone', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    await p.provision(options());
    await writeFile(path.join(root, PV_DIR, 'pvc-1', 'data'), 'x');
    await p.delete(ourVolume('pvc-1'));
    expect(existsSync(path.join(root, PV_DIR, 'pvc-1'))).toBe(false);
    expect(existsSync(path.join(root, PV_DIR))).toBe(true);
    await p.delete(ourVolume('pvc-1'));
  });

  it('fails without the identity annotation', async () => {
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    await expect(p.delete(ourVolume('pvc-1', undefined, null))).rejects.toThrow('identity annotation not found on PV');
  });

  it("ignores another node's volume and leaves its directory alone", async () => {
    const dir = path.join(root, PV_DIR, 'pvc-2');
    await mkdir(dir, { recursive: true });
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    const err = await p.delete(ourVolume('pvc-2', undefined, 'node-2')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IgnoredError);
    expect((err as IgnoredError).reason).toBe('identity annotation on PV does not match ours');
    expect(existsSync(dir)).toBe(true);
  });

  it('refuses to remove anything but a directory directly inside pvDir', async () => {
    await mkdir(path.join(root, 'etc'), { recursive: true });
    await mkdir(path.join(root, PV_DIR, 'nested/deeper'), { recursive: true });
    const p = new HostPathProvisioner({ identity: 'node-1', hostRoot: root });
    for (const nodePath of [
      `${PV_DIR}/../../etc`,
      PV_DIR,
      `${PV_DIR}/`,
      '/etc',
      'tmp/hostpath-provisioner/x',
      `${PV_DIR}/nested/deeper`,
      `${PV_DIR}/..`,
    ]) {
      await expect(p.delete(ourVolume('pvc-x', nodePath)), nodePath).rejects.toThrow(/^refusing to delete/);
    }
    await expect(p.delete({ metadata: ourVolume('pvc-x').metadata, spec: {} })).rejects.toThrow(
      'PV pvc-x has no hostPath',
    );
    expect(existsSync(path.join(root, 'etc'))).toBe(true);
    expect(existsSync(path.join(root, PV_DIR, 'nested/deeper'))).toBe(true);
  });
});
