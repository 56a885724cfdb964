/**
 * The size of the file system holding a node path, measured by a helper pod (default mode, where the provisioner
 * does not see the nodes' disks): a pod built like the setup helper pod, mounting the base path, that prints
 * `stat -f -c '%S %b %a'` of it (block size, blocks, blocks available), read from its log.
 *
 * The pod is labelled `local.path.provisioner/operation: statfs` (the reconciler leaves it alone), records the
 * provisioner as every helper pod does, and is named after the node and path, so a pod left by a crash is replaced by
 * the next measurement of that path (not one of another provisioner: see `HelperPodRunner`).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { makeCoreV1Calls, withSignal, type CoreV1Calls, type Logger } from '@kprov/provisioner-lib';
import { buildHelperPod, HELPER_POD_NAME_MAX_LENGTH } from './build.js';
import { validateHelperPodTemplate } from './template.js';
import { LABEL_OPERATION, provisionerAnnotation } from './labels.js';
import { HelperPodRunner } from './runner.js';
import type { FileSystemSize } from '../executor.js';

/** The `local.path.provisioner/operation` label value of a measuring helper pod. */
export const STATFS_OPERATION = 'statfs';

/** The script the measuring container runs (busybox and GNU `stat` both take it). */
export const STATFS_SCRIPT = 'stat -f -c "%S %b %a" "$VOL_BASE"';

/** What {@link HelperPodStatfs} needs: the same as the setup helper pods. */
export interface HelperPodStatfsOptions {
  /** How to reach the API server. */
  readonly kubeConfig: KubeConfig;
  /** The provisioner's namespace, where helper pods run. */
  readonly namespace: string;
  /** The current helper pod template. */
  readonly helperPodTemplate: () => V1Pod;
  /** `--service-account-name`, set on the pod. */
  readonly serviceAccountName: string;
  /** `--configmap-name`. */
  readonly configMapName: string;
  /** `--provisioner-name`, recorded on the pod (`local.path.provisioner/provisioner`). Default none. */
  readonly provisionerName?: string | undefined;
  /** Skip the template checks. Default false. */
  readonly allowUnsafeHelperPodTemplate?: boolean | undefined;
  /** The wait limit in seconds (`cmdTimeoutSeconds`). */
  readonly timeoutSeconds: () => number;
  /** Where the pod's output and troubles are logged. Default: nowhere. */
  readonly logger?: Logger | undefined;
}

/** `<block size> <blocks> <available blocks>` from the last line of the log that has them. */
export function parseStatfsOutput(log: string): FileSystemSize {
  const lines = log.split('\n').reverse();
  for (const line of lines) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s*$/.exec(line);
    if (m === null) continue;
    const bsize = BigInt(m[1]!);
    return { size: bsize * BigInt(m[2]!), free: bsize * BigInt(m[3]!) };
  }
  throw new Error(`no "<block size> <blocks> <available>" line in the output: ${JSON.stringify(log.slice(-200))}`);
}

/** Measures node paths with helper pods. */
export class HelperPodStatfs {
  private readonly runner: HelperPodRunner;
  private readonly core: CoreV1Calls;

  constructor(private readonly options: HelperPodStatfsOptions) {
    this.runner = new HelperPodRunner({ kubeConfig: options.kubeConfig, logger: options.logger });
    this.core = makeCoreV1Calls(options.kubeConfig);
  }

  /** The measuring pod for `basePath` on `node`. */
  pod(node: string, basePath: string): V1Pod {
    const template = this.options.helperPodTemplate();
    validateHelperPodTemplate(template, this.options.allowUnsafeHelperPodTemplate ?? false);
    const hash = createHash('sha256').update(`${node}\u0000${basePath}`).digest('hex').slice(0, 12);
    const pod = buildHelperPod({
      action: 'create',
      template,
      namespace: this.options.namespace,
      serviceAccountName: this.options.serviceAccountName,
      configMapName: this.options.configMapName,
      pvName: hash,
      path: `${basePath.replace(/\/+$/, '')}/statfs`,
      basePath,
      node,
      shared: false,
      sizeBytes: 0,
      volumeMode: 'Filesystem',
      labels: { [LABEL_OPERATION]: STATFS_OPERATION },
      annotations: provisionerAnnotation(this.options.provisionerName),
    });
    pod.metadata!.name = `${template.metadata?.name ?? 'helper-pod'}-${STATFS_OPERATION}-${hash}`.slice(
      0,
      HELPER_POD_NAME_MAX_LENGTH,
    );
    const container = pod.spec!.containers[0]!;
    container.command = ['/bin/sh', '-c', STATFS_SCRIPT];
    container.args = [];
    return pod;
  }

  /** Runs the measuring pod on `node` and reads the size of the file system holding `basePath`. */
  async measure(node: string, basePath: string, signal: AbortSignal): Promise<FileSystemSize> {
    const pod = this.pod(node, basePath);
    const name = pod.metadata?.name ?? '';
    const namespace = this.options.namespace;
    await this.runner.run({ pod, timeoutSeconds: this.options.timeoutSeconds(), signal, keepOnSuccess: true });
    try {
      const container = pod.spec?.containers[0]?.name;
      const log = await this.core.readNamespacedPodLog(
        { name, namespace, ...(container === undefined ? {} : { container }) },
        withSignal(signal),
      );
      return parseStatfsOutput(log);
    } finally {
      await this.runner.remove(namespace, name).catch(() => undefined);
    }
  }
}
