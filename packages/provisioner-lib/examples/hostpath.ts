// A complete provisioner in about 30 lines: directories under a root folder, served as hostPath PVs.
import { mkdir, rm } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { IgnoredError, ProvisionController, type Provisioner } from '@kprov/provisioner-lib';

const root = '/var/lib/example-hostpath';

const provisioner: Provisioner = {
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
    if (path === undefined || !path.startsWith(`${root}/`)) throw new IgnoredError('not a volume of this provisioner');
    await rm(path, { recursive: true, force: true });
  },
};

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const controller = new ProvisionController({ kubeConfig, provisionerName: 'example.com/hostpath', provisioner });
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
await controller.run(stop.signal);
