/**
 * Cleanup Jobs (`useJobForCleaning`): a block volume wiped by a privileged pod on the node instead of a process of
 * the provisioner, shaped as upstream shapes them.
 *
 * @module
 */
import type { V1Job, V1PersistentVolume, V1Toleration } from '@kubernetes/client-node';
import { HOSTNAME_LABEL } from '../discovery/volume.js';
import { fnv1a32 } from '../discovery/volume-name.js';

/** Annotation of the Job: when it was submitted (RFC 3339), for the delete duration metric. */
export const JOB_START_TIME_ANNOTATION = 'start-time';
/** Annotation of the Job: the device it wipes (container path). */
export const JOB_DEVICE_ANNOTATION = 'device';

/** `cleanup-<pv>`: one Job per PV, so two cleanups of one volume can never run at once. */
export function jobName(pvName: string): string {
  return `cleanup-${pvName}`;
}

/** What {@link cleanupJob} needs. */
export interface CleanupJobSpec {
  /** The PV whose volume is wiped. */
  pv: V1PersistentVolume;
  /** The node the Job runs on. */
  nodeName: string;
  /** The Job's namespace (`MY_NAMESPACE`). */
  namespace: string;
  /** The cleaner's image (`JOB_CONTAINER_IMAGE`). */
  image: string;
  /** `blockCleanerCommand`. */
  command: readonly string[];
  /** The device's path in the container (under `mountDir`). */
  containerPath: string;
  /** The class's `hostDir`, mounted into the pod at `mountDir`. */
  hostDir: string;
  /** The class's `mountDir`. */
  mountDir: string;
  /** `jobTolerations`. */
  tolerations: readonly V1Toleration[];
  /** Submission time, for the `start-time` annotation. */
  now: Date;
}

/** The Job wiping a block volume: `blockCleanerCommand` with `LOCAL_PV_BLKDEVICE`, on the PV's node, privileged. */
export function cleanupJob(spec: CleanupJobSpec): V1Job {
  const pvName = spec.pv.metadata?.name ?? '';
  const labels = { [HOSTNAME_LABEL]: spec.nodeName, pv: pvName, pvuuid: spec.pv.metadata?.uid ?? '' };
  const annotations = {
    [JOB_DEVICE_ANNOTATION]: spec.containerPath,
    [JOB_START_TIME_ANNOTATION]: spec.now.toISOString(),
  };
  const mountName = `mount-${fnv1a32(spec.hostDir + spec.mountDir).toString(16)}`;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: jobName(pvName), namespace: spec.namespace, labels, annotations },
    spec: {
      template: {
        metadata: { labels, annotations },
        spec: {
          restartPolicy: 'OnFailure',
          nodeSelector: { [HOSTNAME_LABEL]: spec.nodeName },
          tolerations: [...spec.tolerations],
          containers: [
            {
              name: 'cleaner',
              image: spec.image,
              command: [...spec.command],
              env: [{ name: 'LOCAL_PV_BLKDEVICE', value: spec.containerPath }],
              securityContext: { privileged: true },
              volumeMounts: [
                { name: mountName, mountPath: spec.mountDir },
                { name: 'dev', mountPath: '/dev' },
              ],
            },
          ],
          volumes: [
            { name: mountName, hostPath: { path: spec.hostDir } },
            { name: 'dev', hostPath: { path: '/dev' } },
          ],
        },
      },
    },
  };
}
