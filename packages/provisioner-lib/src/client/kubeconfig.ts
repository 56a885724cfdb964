/** How a provisioner binary finds the API server. */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node';
// client-node's parsing of a kubeconfig's entries, by path: its module imports nothing but node:fs.
import { newClusters, newContexts, newUsers } from '@kubernetes/client-node/dist/config_types.js';

const SERVICEACCOUNT_ROOT = '/var/run/secrets/kubernetes.io/serviceaccount';

const require = createRequire(import.meta.url);

/** One of client-node's authenticators (`ExecAuth`, `FileAuth`, ...). */
interface Authenticator {
  isAuthProvider(user: User): boolean;
  applyAuthentication(user: User, opts: { headers?: Record<string, string> }): Promise<void>;
}

/**
 * client-node's authenticators, in its order. Each module is loaded only when the user is none of those before it:
 * the last, OpenID Connect's, imports client-node's `config.js` and with it the whole generated client and undici,
 * which a pod's service account (a token file, the fourth) must not pay for.
 */
const AUTHENTICATORS: readonly (() => Promise<Authenticator>)[] = [
  async () => new (await import('@kubernetes/client-node/dist/azure_auth.js')).AzureAuth(),
  async () => new (await import('@kubernetes/client-node/dist/gcp_auth.js')).GoogleCloudPlatformAuth(),
  async () => new (await import('@kubernetes/client-node/dist/exec_auth.js')).ExecAuth(),
  async () => new (await import('@kubernetes/client-node/dist/file_auth.js')).FileAuth(),
  async () => new (await import('@kubernetes/client-node/dist/oidc_auth.js')).OpenIDConnectAuth(),
];

/**
 * A kubeconfig loaded as client-node's `KubeConfig` loads one, with the same fields, before anything asks for
 * client-node's own class. client-node's `config.js`, which defines `KubeConfig`, imports its whole generated client
 * and undici at its top level: about 80 MiB of RSS in a process that otherwise has 45. This class holds what a
 * `KubeConfig` holds (`clusters`, `contexts`, `users`, `currentContext`, parsed by client-node's own `newClusters`,
 * `newContexts` and `newUsers`) and has the methods the library's clients call; every other method of client-node's
 * `KubeConfig` is there too and first turns it into client-node's `KubeConfig`, the same object
 * ({@link asKubeConfig}), so that a program that calls one gets client-node's own.
 */
class KubeConfigData {
  clusters: Cluster[] = [];
  contexts: Context[] = [];
  users: User[] = [];
  currentContext = '';
  custom_authenticators: Authenticator[] = [];
  /** The built-in authenticators loaded so far, by their place in {@link AUTHENTICATORS}. */
  private authenticators: Promise<Authenticator>[] = [];

  getCurrentContext(): string {
    return this.currentContext;
  }

  private find<T extends { name: string }>(list: T[], name: string, key: string): T | null {
    // client-node's findObject: an entry's nested object (`cluster`, `user`, `context`) gets the entry's name.
    for (const obj of list) {
      if (obj.name !== name) continue;
      const nested = (obj as Record<string, unknown>)[key] as T | undefined;
      if (nested) {
        nested.name = name;
        return nested;
      }
      return obj;
    }
    return null;
  }

  getCurrentCluster(): Cluster | null {
    const context = this.find(this.contexts, this.currentContext, 'context');
    return context === null ? null : this.find(this.clusters, context.cluster, 'cluster');
  }

  getCurrentUser(): User | null {
    const context = this.find(this.contexts, this.currentContext, 'context');
    return context === null ? null : this.find(this.users, context.user, 'user');
  }

  /** client-node's `applyAuthorizationHeader`: the user's authenticator, then its token. */
  async applyAuthorizationHeader(opts: { headers?: Record<string, string> }): Promise<void> {
    const user = this.getCurrentUser();
    if (user === null) return;
    opts.headers ??= {};
    if (user.exec !== undefined || user.authProvider !== undefined || this.custom_authenticators.length > 0) {
      const authenticator = await this.authenticatorFor(user);
      if (authenticator !== undefined) await authenticator.applyAuthentication(user, opts);
    }
    if (user.token) opts.headers.Authorization = `Bearer ${user.token}`;
  }

  /** client-node's choice: the first of its authenticators, then of the custom ones, that takes `user`. */
  private async authenticatorFor(user: User): Promise<Authenticator | undefined> {
    for (const [i, load] of AUTHENTICATORS.entries()) {
      const authenticator = await (this.authenticators[i] ??= load());
      if (authenticator.isAuthProvider(user)) return authenticator;
    }
    return this.custom_authenticators.find((a) => a.isAuthProvider(user));
  }

  /** client-node's `loadFromFile`: the file's entries, with relative certificate paths made absolute. */
  readFile(file: string): void {
    const root = path.dirname(file);
    // Required here, not imported: a pod's service account needs no YAML parser (js-yaml is 0.5 MiB of V8's heap).
    const { load } = require('js-yaml') as typeof import('js-yaml');
    const config = load(readFileSync(file, 'utf8')) as Record<string, unknown>;
    this.clusters = newClusters(config.clusters);
    this.contexts = newContexts(config.contexts);
    this.users = newUsers(config.users);
    this.currentContext = config['current-context'] as string;
    const absolute = (f: string): string => (path.isAbsolute(f) ? f : path.join(root, f));
    for (const cluster of this.clusters)
      if (cluster.caFile) (cluster as { caFile: string }).caFile = absolute(cluster.caFile);
    for (const user of this.users) {
      if (user.certFile) (user as { certFile: string }).certFile = absolute(user.certFile);
      if (user.keyFile) (user as { keyFile: string }).keyFile = absolute(user.keyFile);
    }
  }

  /** client-node's `loadFromCluster`: the pod's service account. */
  readServiceAccount(env: Readonly<Record<string, string | undefined>>): void {
    const host = env.KUBERNETES_SERVICE_HOST ?? '';
    const port = env.KUBERNETES_SERVICE_PORT ?? '';
    const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
    const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
    this.clusters = [{ name: 'inCluster', caFile: `${SERVICEACCOUNT_ROOT}/ca.crt`, server, skipTLSVerify: false }];
    this.users = [
      {
        name: 'inClusterUser',
        authProvider: { name: 'tokenFile', config: { tokenFile: `${SERVICEACCOUNT_ROOT}/token` } },
      },
    ];
    const namespaceFile = `${SERVICEACCOUNT_ROOT}/namespace`;
    const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8') : undefined;
    this.contexts = [
      {
        cluster: 'inCluster',
        name: 'inClusterContext',
        user: 'inClusterUser',
        ...(namespace === undefined ? {} : { namespace }),
      },
    ];
    this.currentContext = 'inClusterContext';
  }

  /** client-node's `mergeConfig(config, true)`: adds the entries, refusing duplicate names, keeping the context. */
  merge(other: KubeConfigData): void {
    const add = <T extends { name: string }>(list: T[], items: T[], what: string): void => {
      for (const item of items) {
        if (list.some((x) => x.name === item.name)) throw new Error(`Duplicate ${what}: ${item.name}`);
        list.push(item);
      }
    };
    add(this.clusters, other.clusters, 'cluster');
    add(this.users, other.users, 'user');
    add(this.contexts, other.contexts, 'context');
  }
}

/**
 * The methods of client-node's `KubeConfig` that {@link KubeConfigData} does not have itself (its public ones, and
 * the private ones other client-node code calls). On a `KubeConfigData` each turns the object into client-node's
 * `KubeConfig` (loading client-node's entry point, if it was not loaded) and then runs client-node's method:
 * `kubeConfig.makeApiClient(CoreV1Api)` works on the runtime's kubeconfig as on any other.
 */
export const CLIENT_NODE_ONLY_METHODS = [
  'addAuthenticator',
  'getContexts',
  'getClusters',
  'getUsers',
  'setCurrentContext',
  'getContextObject',
  'getCluster',
  'getUser',
  'loadFromFile',
  'applyToHTTPSOptions',
  'applySecurityAuthentication',
  'getName',
  'loadFromString',
  'loadFromOptions',
  'loadFromClusterAndUser',
  'loadFromCluster',
  'mergeConfig',
  'addCluster',
  'addUser',
  'addContext',
  'loadFromDefault',
  'makeApiClient',
  'makePathsAbsolute',
  'exportConfig',
  'getCurrentContextObject',
  'getAgentCacheKey',
  'createAgent',
  'createDispatcherOptions',
  'createDispatcher',
  'applyHTTPSOptions',
  'applyOptions',
] as const;

for (const name of CLIENT_NODE_ONLY_METHODS) {
  Object.defineProperty(KubeConfigData.prototype, name, {
    configurable: true,
    writable: true,
    value: function clientNodeMethod(this: KubeConfigData, ...args: unknown[]): unknown {
      const converted = asKubeConfig(this as unknown as KubeConfig) as unknown as Record<
        string,
        (...a: unknown[]) => unknown
      >;
      return converted[name]!(...args);
    },
  });
}

/**
 * `kc` as client-node's `KubeConfig`: a `KubeConfig` as it is; the runtime's kubeconfig ({@link loadKubeConfigData})
 * becomes one in place, the same object with the same entries, so that what was registered for it (its client-side
 * rate limit, its connection pool) still applies. Loads client-node's entry point, when it was not loaded yet.
 */
export function asKubeConfig(kc: KubeConfig): KubeConfig {
  if (!(kc instanceof KubeConfigData)) return kc;
  const { KubeConfig: ClientNodeKubeConfig } =
    require('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
  const fresh = new ClientNodeKubeConfig() as unknown as Record<string, unknown>;
  const data = kc as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(fresh)) if (!Object.hasOwn(data, key)) data[key] = value;
  // Its own authenticators (client-node's, made above) replace the lazily loaded ones; the custom ones stay.
  delete data.authenticators;
  data.authenticators = fresh.authenticators;
  Object.setPrototypeOf(kc, ClientNodeKubeConfig.prototype);
  return kc;
}

/**
 * Loads the kubeconfig as {@link loadKubeConfig} does, without loading client-node's `KubeConfig` class: the object
 * has the methods the library's clients call and is typed as a `KubeConfig`; it becomes client-node's, in place,
 * when anything calls a method only client-node's class has ({@link CLIENT_NODE_ONLY_METHODS}) or hands it to
 * {@link asKubeConfig}. For the runtime, whose binaries load client-node's `KubeConfig` only when they use it.
 */
export function loadKubeConfigData(
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): KubeConfig {
  const kubeConfig = new KubeConfigData();
  if (file !== undefined) {
    const files = file.split(path.delimiter).filter((f) => f !== '');
    files.forEach((f, i) => {
      const target = i === 0 ? kubeConfig : new KubeConfigData();
      try {
        target.readFile(f);
      } catch (err) {
        throw new Error(
          `cannot load kubeconfig "${f}" (--kubeconfig, KUBECONFIG): ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      }
      if (target !== kubeConfig) kubeConfig.merge(target);
    });
    return kubeConfig as unknown as KubeConfig;
  }
  if ((env.KUBERNETES_SERVICE_HOST ?? '') !== '' && (env.KUBERNETES_SERVICE_PORT ?? '') !== '') {
    kubeConfig.readServiceAccount(env);
    return kubeConfig as unknown as KubeConfig;
  }
  const fallback = path.join(env.HOME ?? homedir(), '.kube', 'config');
  if (!existsSync(fallback)) {
    throw new Error(
      `no kubeconfig: not running in a pod (KUBERNETES_SERVICE_HOST is not set) and ${fallback} does not exist; pass --kubeconfig FILE or set KUBECONFIG`,
    );
  }
  kubeConfig.readFile(fallback);
  return kubeConfig as unknown as KubeConfig;
}

/**
 * Loads the kubeconfig: from `file` when given (a `KUBECONFIG`-style list separated by `:` is merged as kubectl
 * does, the first file's context winning), else the in-cluster service account when `KUBERNETES_SERVICE_HOST` and
 * `KUBERNETES_SERVICE_PORT` are set, else `~/.kube/config`. Throws an error saying what to do when none applies.
 */
export function loadKubeConfig(
  file: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): KubeConfig {
  return asKubeConfig(loadKubeConfigData(file, env));
}
