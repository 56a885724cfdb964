/**
 * A minimal provisioner binary on the runtime, the built library as a user installs it: hostPath volumes as
 * directories under `--root`. `--stop-delay` holds the graceful stop that long (a clean-up that waits), so that a
 * test can send a second signal while it runs.
 *
 * Usage: node minimal-provisioner.ts [runtime flags] --root DIR [--stop-delay DURATION]
 */
import { mkdir, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { IgnoredError } from '@kprov/provisioner-lib';
import { runProvisioner } from '@kprov/provisioner-lib/runtime';

process.exit(
  await runProvisioner({
    name: 'minimal-provisioner',
    description: 'A minimal provisioner: one directory under --root per volume.',
    flags: {
      root: { type: 'string', env: 'ROOT', required: true, usage: 'the `directory` holding the volumes' },
      'stop-delay': { type: 'duration', default: 0, usage: 'how long the graceful stop waits at its end' },
    },
    setup: ({ options, logger, defer }) => {
      const root = options.root;
      defer(async () => {
        logger.info({}, 'Stop delay');
        await sleep(options['stop-delay']);
      });
      return {
        provisionerName: 'example.com/minimal',
        provisioner: {
          async provision({ pvName }) {
            const path = `${root}/${pvName}`;
            await mkdir(path, { recursive: true });
            return {
              volume: {
                metadata: { name: pvName },
                spec: {
                  persistentVolumeReclaimPolicy: 'Delete',
                  accessModes: ['ReadWriteOnce'],
                  capacity: { storage: '1Mi' },
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
        },
      };
    },
  }),
);
