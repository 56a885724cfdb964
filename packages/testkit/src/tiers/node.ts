/**
 * The node tier: the real tier's shared control plane, with real nodes (`startNode`: kubelet, containerd, runc)
 * where the real tier has the simulated kubelet. A node starts in a few seconds, so each test gets new ones, with
 * new filesystems, as it gets new simulated nodes on the other tiers.
 */
import { busyboxImage } from '../node/images.js';
import { startNode, type RealNode } from '../node/node.js';
import { RealTier, type NodeSource, type RealTierOptions } from './real.js';

/** Options of {@link NodeTier}. */
export interface NodeTierOptions extends RealTierOptions {
  /** OCI archives every node loads, besides busybox (see `busyboxImage`). Default none. */
  images?: readonly string[];
}

/** Real nodes for each test; see the module comment. */
function realNodes(tierImages: readonly string[]): NodeSource {
  return {
    tier: 'node',
    async start(cp, specs, { schedulable, images }) {
      for (const spec of specs) {
        if (spec.ready === false)
          throw new Error(
            `NodeTier: node ${spec.name} is asked to be not Ready, which only the testkit tier simulates`,
          );
        if (spec.root !== undefined)
          throw new Error(
            `NodeTier: node ${spec.name} is given a root folder, but a real node's filesystem is its own: read it through cluster.onNode`,
          );
      }
      const all = [await busyboxImage(), ...tierImages, ...images];
      const started = await Promise.allSettled(
        specs.map((spec) =>
          startNode({
            controlPlane: cp,
            name: spec.name,
            images: all,
            waitSchedulable: schedulable,
            ...(spec.labels === undefined ? {} : { labels: spec.labels }),
          }),
        ),
      );
      const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const stop = async (): Promise<void> => {
        await Promise.all(nodes.map((n: RealNode) => n.stop()));
      };
      const failed = started.find((r) => r.status === 'rejected');
      if (failed !== undefined) {
        await stop();
        throw failed.reason;
      }
      return { nodes: nodes.map((n) => ({ name: n.name, root: n.root })), stop };
    },
  };
}

/**
 * The node tier; see the module comment. Its control plane runs kube-controller-manager with every controller of
 * the build (`controllers: '*'`): this build's kube-apiserver puts an `openshift-service-ca.crt` ConfigMap into every
 * service account token volume, and a real kubelet starts no pod without it.
 */
export class NodeTier extends RealTier {
  constructor(options: NodeTierOptions = {}) {
    super({ controlPlane: { controllers: '*', ...options.controlPlane } }, realNodes(options.images ?? []));
  }
}
