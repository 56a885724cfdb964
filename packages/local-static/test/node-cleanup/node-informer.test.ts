/** The node-cleanup controller's Node informer: every page of Nodes listed item by item, each slimmed. */
import { realClock, silentLogger } from '@kprov/provisioner-lib';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubeConfigFor, startApiServer, type Testkit } from '@kprov/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeInformer } from '../../src/node-cleanup/node-informer.js';
import { HOSTNAME_INDEX } from '../../src/node-cleanup/node-exists.js';

describe('the Node informer of node-cleanup', () => {
  let kit: Testkit;

  beforeEach(async () => {
    kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
  });

  afterEach(async () => {
    await kit.stop();
  });

  it('lists more Nodes than a page holds, keeping only their identity and labels', async () => {
    const kc = kubeConfigFor(kit.url);
    const core = kc.makeApiClient(CoreV1Api);
    const count = 501; // one more than the informer's page of 500
    for (let i = 0; i < count; i++)
      await core.createNode({
        body: {
          metadata: { name: `n${i}`, labels: { 'kubernetes.io/hostname': `host-${i}` } },
          status: { images: [{ names: ['registry.example/big:1'], sizeBytes: 1 }] },
        },
      });
    const informer = nodeInformer(kc, { clock: realClock, logger: silentLogger });
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    try {
      await informer.waitForSync(AbortSignal.timeout(60_000));
      expect(informer.store.size).toBe(count);
      const last = informer.store.get(`n${count - 1}`);
      expect(last).toMatchObject({ kind: 'Node', metadata: { name: `n${count - 1}` } });
      expect(last).not.toHaveProperty('status');
      expect(informer.store.byIndex(HOSTNAME_INDEX, 'host-0').map((n) => n.metadata?.name)).toEqual(['n0']);
    } finally {
      stop.abort();
      await running;
    }
  });
});
