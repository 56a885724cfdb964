/**
 * The library's own client over TLS, against a real kube-apiserver (its serving certificate signed by the control
 * plane's CA, its users authenticated by client certificates): every connection of a burst presents the kubeconfig's
 * client certificate and checks the server against its CA and, when set, its `tlsServerName`; through a kubeconfig's
 * `proxy-url` (an HTTP proxy's CONNECT tunnel, undici's `ProxyAgent`) the same, for the library's client and
 * client-node's API classes. A kubeconfig whose TLS material OpenSSL cannot read is refused when the client is made,
 * naming what to check.
 */
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CoreV1Api, KubeConfig, type Cluster as KubeConfigCluster } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { createProxy } from 'proxy';
import { describe, expect, it } from 'vitest';
import { closeSharedConnections, makeApiClient } from '../../src/client/agent.js';
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

/** An HTTP proxy (as Squid is) on 127.0.0.1, and the targets of the CONNECT tunnels it was asked for. */
async function startConnectProxy(): Promise<{ url: string; tunnels: string[]; close: () => Promise<void> }> {
  const server = createProxy(createServer());
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  server.on('connect', (req: { url?: string }) => tunnels.push(req.url ?? ''));
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tunnels,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
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

describeTiers(
  "through the kubeconfig's proxy-url",
  (tier) => {
    /** A copy of the cluster's kubeconfig that goes through a new proxy, both closed after the test. */
    async function throughProxy(kc: KubeConfig, change: Partial<KubeConfigCluster> = {}) {
      const proxy = await startConnectProxy();
      tier.defer(() => proxy.close());
      const proxied = withCluster(kc, { ...change, proxyUrl: proxy.url });
      tier.defer(() => closeSharedConnections(proxied));
      return { proxy, proxied };
    }

    it("sends a burst through the proxy's CONNECT tunnel, with the kubeconfig's client certificate and CA", async () => {
      const c = await tier.start({ nodes: [] });
      const { proxy, proxied } = await throughProxy(c.kubeConfig);
      const rest = new RestClient(proxied);
      const answers = await Promise.all(
        Array.from({ length: 40 }, () =>
          rest.json<{ metadata: { name: string } }>({ method: 'GET', path: '/api/v1/namespaces/default' }),
        ),
      );
      expect(answers.map((a) => a.metadata.name)).toEqual(Array.from({ length: 40 }, () => 'default'));
      // Every tunnel leads to the API server: nothing went around the proxy's back.
      expect(proxy.tunnels.length).toBeGreaterThan(0);
      expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(c.url).host]));
    });

    it("serves client-node's API classes made by makeApiClient through it too", async () => {
      const c = await tier.start({ nodes: [] });
      const { proxy, proxied } = await throughProxy(c.kubeConfig);
      const core = makeApiClient(proxied, CoreV1Api);
      const names = await Promise.all(
        Array.from({ length: 20 }, async () => (await core.readNamespace({ name: 'default' })).metadata?.name),
      );
      expect(names).toEqual(Array.from({ length: 20 }, () => 'default'));
      expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(c.url).host]));
    });

    it('refuses a server that the CA of the kubeconfig did not sign, through the proxy too', async () => {
      const c = await tier.start({ nodes: [] });
      const { proxied } = await throughProxy(c.kubeConfig, {
        caData: c.kubeConfig.getCurrentUser()?.certData,
        caFile: undefined,
      });
      await expect(new RestClient(proxied).json({ method: 'GET', path: '/api/v1/namespaces/default' })).rejects.toThrow(
        /certificate/,
      );
      // fetch says `fetch failed`, TLS's reason only in its cause: the library's clients name the request and it.
      await expect(makeApiClient(proxied, CoreV1Api).readNamespace({ name: 'default' })).rejects.toMatchObject({
        message: expect.stringMatching(/^GET https:\/\/.*\/api\/v1\/namespaces\/default: .*certificate/),
        cause: { message: expect.stringMatching(/certificate/) },
      });
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
