/**
 * The library's own client over TLS, against a real kube-apiserver (its serving certificate signed by the control
 * plane's CA, its users authenticated by client certificates): every connection of a burst presents the kubeconfig's
 * client certificate and checks the server against its CA and, when set, its `tlsServerName`. A kubeconfig whose
 * TLS material OpenSSL cannot read is refused when the client is made, naming what to check.
 */
import { KubeConfig, type Cluster as KubeConfigCluster } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { closeSharedConnections } from '../../src/client/agent.js';
import { RestClient } from '../../src/client/rest.js';

/** A copy of `kc` whose current cluster has `change` applied. */
function withCluster(kc: KubeConfig, change: Partial<KubeConfigCluster>): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === kc.getCurrentCluster()?.name ? { ...c, ...change } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return copy;
}

describeTiers(
  'RestClient over TLS',
  (tier) => {
    /** A RestClient for `kc` whose connections are closed after the test. */
    function client(kc: KubeConfig): RestClient {
      tier.defer(() => closeSharedConnections(kc));
      return new RestClient(kc);
    }

    it("sends a burst over many connections, each with the kubeconfig's client certificate and CA", async () => {
      const c = await tier.start({ nodes: [] });
      const rest = client(c.kubeConfig);
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          rest.json<{ metadata: { name: string } }>({ method: 'GET', path: '/api/v1/namespaces/default' }),
        ),
      );
      expect(answers.map((a) => a.metadata.name)).toEqual(Array.from({ length: 40 }, () => 'default'));
    });

    it('refuses a server that the CA of the kubeconfig did not sign', async () => {
      const c = await tier.start({ nodes: [] });
      // The user's own certificate as the only trusted one: it did not sign the server's.
      const kc = withCluster(c.kubeConfig, { caData: c.kubeConfig.getCurrentUser()?.certData, caFile: undefined });
      await expect(client(kc).json({ method: 'GET', path: '/api/v1/namespaces/default' })).rejects.toThrow(
        /certificate/,
      );
    });

    it("checks the server's certificate against tlsServerName when set", async () => {
      const c = await tier.start({ nodes: [] });
      const named = withCluster(c.kubeConfig, { tlsServerName: 'kubernetes.default.svc' });
      await expect(
        client(named).json<{ metadata: { name: string } }>({ method: 'GET', path: '/api/v1/namespaces/default' }),
      ).resolves.toMatchObject({ metadata: { name: 'default' } });
      const elsewhere = withCluster(c.kubeConfig, { tlsServerName: 'elsewhere.example' });
      await expect(client(elsewhere).json({ method: 'GET', path: '/api/v1/namespaces/default' })).rejects.toThrow(
        /elsewhere\.example/,
      );
    });
  },
  { tiers: ['real'] },
);

describe('RestClient and TLS material that cannot be read', () => {
  it('is refused when the client is made, naming the kubeconfig fields to check and what OpenSSL said', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443' }],
      users: [{ name: 'u', certData: Buffer.from('not a certificate').toString('base64'), keyData: 'bm90IGEga2V5' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    expect(() => new RestClient(kc)).toThrow(/TLS material is not usable \(.*PEM.*\): check .*client-key\(-data\)/);
  });
});
