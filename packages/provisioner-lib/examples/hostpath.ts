// A complete provisioner binary in about 30 lines: directories under a root folder, served as hostPath PVs.
import { mkdir, rm } from 'node:fs/promises';
import { IgnoredError, type Provisioner } from '@kprov/provisioner-lib';
import { runProvisioner } from '@kprov/provisioner-lib/runtime';

function hostPathProvisioner(root: string): Provisioner {
  return {
    async provision({ pvName, pvc, storageClass }) {
      const path = `${root}/${pvName}`;
      await mkdir(path, { recursive: true, mode: 0o777 });
      return {
        volume: {
          metadata: { name: pvName },
          spec: {
            persistentVolumeReclaimPolicy: storageClass.reclaimPolicy ?? 'Delete',
            accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
            capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '1Gi' },
            hostPath: { path },
          },
        },
      };
    },
    async delete(volume) {
      const path = volume.spec?.hostPath?.path;
      if (path === undefined || !path.startsWith(`${root}/`))
        throw new IgnoredError('not a volume of this provisioner');
      await rm(path, { recursive: true, force: true });
    },
  };
}

process.exit(
  await runProvisioner({
    name: 'example-hostpath',
    flags: { root: { type: 'string', default: '/var/lib/example-hostpath', usage: 'directory holding the volumes' } },
    setup: ({ options }) => ({
      provisionerName: 'example.com/hostpath',
      provisioner: hostPathProvisioner(options.root),
    }),
  }),
);
