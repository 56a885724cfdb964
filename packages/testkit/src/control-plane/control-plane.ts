/**
 * A real Kubernetes control plane for tests, as controller-runtime's envtest starts one for Go: etcd and
 * kube-apiserver, and kube-controller-manager and kube-scheduler when the folder named by `KUBEBUILDER_ASSETS` holds
 * them (envtest's assets do not), on free loopback ports, in a temporary folder, with generated credentials, and the
 * CRDs asked for installed. There is no kubelet: `startKubelet` simulates one against it.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { findBinaries, missingOptionalBinary, optionalBinary, type Binary, type OptionalBinary } from './assets.js';
import { Component, logTail } from './component.js';
import { applyCRDs, readCRDs, type CRDInstallOptions } from './crds.js';
import { waitFor } from '../process/wait-for.js';
import { Guardian } from './guardian.js';
import { CertificateAuthority, serviceAccountKeys, type CertAndKey, type Identity } from './pki.js';
import { answers200, request } from './probe.js';

/** Extra command-line flags per binary; they come after ours, so a flag given here wins. */
export interface ExtraArgs {
  etcd?: readonly string[];
  apiServer?: readonly string[];
  controllerManager?: readonly string[];
  scheduler?: readonly string[];
}

/** Options of {@link startControlPlane}. */
export interface ControlPlaneOptions {
  /**
   * Folder holding `etcd` and `kube-apiserver`, and `kube-controller-manager` and `kube-scheduler` if they are to run
   * (a `setup-envtest` folder has only the first two). Default `$KUBEBUILDER_ASSETS`.
   */
  binDir?: string;
  /**
   * Run kube-controller-manager (PV binding, service accounts and each namespace's `default` one, garbage
   * collection, node lifecycle): `true` requires it (an error saying where to get it when the folder lacks it),
   * `false` never runs it. Default: run it when the folder holds it.
   */
  controllerManager?: boolean;
  /** Run kube-scheduler: `true` requires it, `false` never runs it. Default: run it when the folder holds it. */
  scheduler?: boolean;
  /**
   * CRDs installed once kube-apiserver is up, before the start resolves: files and folders of YAML or JSON
   * (envtest's `CRDDirectoryPaths`), CRD objects, and how long they may take to be Established. Default none.
   */
  crds?: CRDInstallOptions;
  /**
   * Told each step of the start once it is done (`etcd ready`, `kube-apiserver ready`, ...), with the ms it took;
   * `kprov-testkit control-plane` prints them. Default none.
   */
  onStep?: (step: string, ms: number) => void;
  /** kube-apiserver's port on 127.0.0.1; 0 picks a free one. Default 0. */
  apiServerPort?: number;
  /** etcd's client port on 127.0.0.1; 0 picks a free one. Default 0. */
  etcdPort?: number;
  /** Folder for etcd's data, credentials, kubeconfigs and logs. It is removed by `stop()` only when it was made here. Default: a new temporary folder. */
  dataDir?: string;
  /** How long each binary may take to become ready, in ms. Default 60 000. */
  startTimeoutMs?: number;
  /** kube-apiserver's `--authorization-mode`. Default `Node,RBAC` (a user without a permission gets 403). */
  authorizationMode?: string;
  /**
   * kube-apiserver's watch cache. Off, a watch or list from a resourceVersion that {@link ControlPlane.compact} has
   * compacted away gets 410 Gone at once (with the cache on, only once the cache has moved past it). Default true.
   */
  watchCache?: boolean;
  /** kube-controller-manager's `--pvclaimbinder-sync-period` (how soon a pre-bound PV or a lost claim is looked at again). Default `15s`, as upstream. */
  pvClaimBinderSyncPeriod?: string;
  /** kube-controller-manager's client limit (`--kube-api-qps`/`--kube-api-burst`). Default 20/30, as upstream: about 4 bindings/s on a burst of claims. */
  controllerManagerQps?: { qps: number; burst: number };
  /**
   * kube-controller-manager's `--controllers`. Default `*,-service-ca-certificate-publisher-controller`: every
   * upstream controller, without the one this build adds (it copies an `openshift-service-ca.crt` ConfigMap into
   * every namespace). Pods on a real kubelet need that ConfigMap with this build's kube-apiserver (it adds it to every
   * service account token volume): `*` runs the publisher too.
   */
  controllers?: string;
  /** klog verbosity (`-v`) of the Kubernetes binaries. Default 2. */
  verbosity?: number;
  /** Extra flags per binary. Default none. */
  extraArgs?: ExtraArgs;
}

/** A running control plane. */
export interface ControlPlane {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** client-node configuration of an administrator (user `admin` in group `system:masters`), namespace `default`. */
  readonly kubeConfig: KubeConfig;
  /** That administrator's kubeconfig file, for kubectl and child processes. */
  readonly kubeconfigPath: string;
  /** The folder of data, credentials and logs. */
  readonly dataDir: string;
  /** The CA that signs the serving certificate and client certificates (PEM). */
  readonly caCert: string;
  /** The binaries running: `etcd`, `kube-apiserver`, and `kube-controller-manager` and `kube-scheduler` when started. */
  readonly binaries: readonly Binary[];
  /** The names of the CRDs installed at start ({@link ControlPlaneOptions.crds}). */
  readonly crds: readonly string[];
  /** The log file of a binary. */
  logFile(binary: Binary): string;
  /** A client-node configuration for another user, with a client certificate signed by the control plane's CA. */
  kubeConfigFor(identity: Identity): Promise<KubeConfig>;
  /** A client-node configuration that authenticates as a service account, with a token from the TokenRequest API (valid 1 h). The account must exist. */
  serviceAccountKubeConfig(namespace: string, name: string): Promise<KubeConfig>;
  /** Writes a kubeconfig file for `identity` (default the administrator); returns its path. */
  writeKubeconfig(file: string, identity?: Identity): Promise<string>;
  /** Stops kube-apiserver (etcd keeps the data); clients see connections refused until {@link startApiServer}. */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port, after {@link stopApiServer}; resolves once it is ready. */
  startApiServer(): Promise<void>;
  /** Compacts etcd at its current revision; returns that revision. See {@link ControlPlaneOptions.watchCache}. */
  compact(): Promise<number>;
  /** Stops every process this control plane started (scheduler, controller-manager, API server, then etcd) and removes the data folder if it made it. */
  stop(): Promise<void>;
}

const ADMIN: Identity = { user: 'admin', groups: ['system:masters'] };
/** The Services' ClusterIP range, and the first address in it, which the `kubernetes` Service gets. */
const SERVICE_CIDR = '10.0.0.0/24';
const KUBERNETES_SERVICE_IP = '10.0.0.1';
const CLUSTER = 'kprov-control-plane';

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Fails with a message naming the flag when an explicitly chosen port is taken. */
async function checkPortFree(port: number, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `port ${port} on 127.0.0.1, chosen for ${what}, is not free (${err.code ?? err.message}): choose another or 0 for a free one`,
        ),
      ),
    );
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
  });
}

/**
 * The address kube-apiserver advertises: written into the `kubernetes` Service's Endpoints, where a loopback address
 * is refused. Nothing connects to it; the host's first non-internal IPv4, else a documentation address.
 */
function advertiseAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '192.0.2.1';
}

/** A kubeconfig for `server` with a client certificate or a token. */
function makeKubeConfig(server: string, ca: string, user: CertAndKey | { token: string }, name: string): KubeConfig {
  const kc = new KubeConfig();
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  kc.loadFromOptions({
    clusters: [{ name: CLUSTER, server, caData: b64(ca), skipTLSVerify: false }],
    users: [
      { name, ...('token' in user ? { token: user.token } : { certData: b64(user.cert), keyData: b64(user.key) }) },
    ],
    contexts: [{ name, cluster: CLUSTER, user: name, namespace: 'default' }],
    currentContext: name,
  });
  return kc;
}

/** An "address already in use" in a binary's log: a free port was taken between our pick and its bind. */
function portRace(logFile: string): boolean {
  return /address already in use/i.test(logTail(logFile, 40));
}

/**
 * Starts a control plane; see the module comment and {@link ControlPlaneOptions}.
 *
 * @throws Error naming the binary and quoting its log when one is missing, exits at start-up or is not ready in
 *   time, or naming the flag when a chosen port is taken. Whatever was started is stopped again.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bin = findBinaries(options.binDir, ['etcd', 'kube-apiserver']);
  /** The optional binary's path when it is to run; `undefined` when it is not (see the options). */
  const optional = (name: OptionalBinary, wanted: boolean | undefined): string | undefined => {
    if (wanted === false) return undefined;
    const file = optionalBinary(options.binDir, name);
    if (file === undefined && wanted === true) throw missingOptionalBinary(options.binDir, name);
    return file;
  };
  const kcmBinary = optional('kube-controller-manager', options.controllerManager);
  const schedulerBinary = optional('kube-scheduler', options.scheduler);
  // Read before anything starts: a bad path or file fails at once, not after the binaries' start.
  const crdFiles = options.crds === undefined ? [] : await readCRDs(options.crds.paths ?? [], options.crds.crds ?? []);
  let stepStart = Date.now();
  const step = (what: string): void => {
    const now = Date.now();
    options.onStep?.(what, now - stepStart);
    stepStart = now;
  };
  if (options.apiServerPort !== undefined && options.apiServerPort !== 0)
    await checkPortFree(options.apiServerPort, 'kube-apiserver --secure-port');
  if (options.etcdPort !== undefined && options.etcdPort !== 0)
    await checkPortFree(options.etcdPort, 'etcd --listen-client-urls');

  const made = options.dataDir === undefined;
  const dataDir =
    options.dataDir === undefined
      ? await mkdtemp(path.join(tmpdir(), 'kprov-control-plane-'))
      : path.resolve(options.dataDir);
  const dirs = {
    pki: path.join(dataDir, 'pki'),
    logs: path.join(dataDir, 'logs'),
    kubeconfigs: path.join(dataDir, 'kubeconfigs'),
  };
  for (const d of Object.values(dirs)) await mkdir(d, { recursive: true, mode: 0o700 });
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const verbosity = String(options.verbosity ?? 2);
  const extra = options.extraArgs ?? {};
  const logFile = (b: Binary): string => path.join(dirs.logs, `${b}.log`);
  const guardian = new Guardian();
  const running: Component[] = [];
  const launch = async (
    spec: Omit<Parameters<typeof Component.start>[0], 'logFile'> & { name: Binary },
    ready: () => Promise<boolean>,
  ): Promise<Component> => {
    const c = await Component.start({ ...spec, logFile: logFile(spec.name) }, ready, timeoutMs);
    guardian.watch(c.child.pid);
    running.push(c);
    return c;
  };
  /**
   * Starts what `start(port)` launches on `port`, or, when that is 0, on a free one, and on another (twice more at
   * most) when a free port was taken between the pick and the binary's bind (`portRace`). Resolves with the
   * component and its port.
   */
  const launchOnPort = async (
    name: Binary,
    port: number,
    start: (port: number) => Promise<Component>,
  ): Promise<[Component, number]> => {
    for (let attempt = 0; ; attempt++) {
      const picked = port === 0 ? await freePort() : port;
      try {
        return [await start(picked), picked];
      } catch (err) {
        if (port === 0 && attempt < 2 && portRace(logFile(name))) continue;
        throw err;
      }
    }
  };

  const stopAll = async (): Promise<void> => {
    guardian.dismiss();
    for (const c of running.reverse()) await c.stop();
    running.length = 0;
    if (made) await rm(dataDir, { recursive: true, force: true });
  };

  try {
    // Credentials.
    const ca = await CertificateAuthority.create('kprov-control-plane-ca');
    // Also valid for the `kubernetes` Service's ClusterIP and the advertised address: pods on a real node
    // (`startNode`) reach the API server through them.
    const serving = await ca.serving(
      'kube-apiserver',
      [
        'localhost',
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
      ],
      ['127.0.0.1', KUBERNETES_SERVICE_IP, advertiseAddress()],
    );
    const sa = serviceAccountKeys();
    const file = async (name: string, text: string): Promise<string> => {
      const p = path.join(dirs.pki, name);
      await writeFile(p, text, { mode: 0o600 });
      return p;
    };
    const caFile = await file('ca.crt', ca.cert);
    const caKeyFile = await file('ca.key', await ca.keyPem());
    const servingCert = await file('apiserver.crt', serving.cert);
    const servingKey = await file('apiserver.key', serving.key);
    const saKey = await file('sa.key', sa.privateKey);
    const saPub = await file('sa.pub', sa.publicKey);
    const admin = await ca.client(ADMIN);
    step('credentials made');

    // etcd reads every ETCD_* variable as a flag: it gets an environment of its own.
    const [, etcdPort] = await launchOnPort('etcd', options.etcdPort ?? 0, async (port) => {
      const peer = await freePort();
      return launch(
        {
          name: 'etcd',
          binary: bin.etcd,
          args: [
            `--data-dir=${path.join(dataDir, 'etcd')}`,
            `--listen-client-urls=http://127.0.0.1:${port}`,
            `--advertise-client-urls=http://127.0.0.1:${port}`,
            `--listen-peer-urls=http://127.0.0.1:${peer}`,
            `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
            `--initial-cluster=default=http://127.0.0.1:${peer}`,
            '--unsafe-no-fsync',
            ...(extra.etcd ?? []),
          ],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        },
        () => answers200(`http://127.0.0.1:${port}/health`),
      );
    });
    step('etcd ready');

    const apiArgs = (apiPort: number): string[] => [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--advertise-address=${advertiseAddress()}`,
      `--tls-cert-file=${servingCert}`,
      `--tls-private-key-file=${servingKey}`,
      `--client-ca-file=${caFile}`,
      `--authorization-mode=${options.authorizationMode ?? 'Node,RBAC'}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      // Pod logs come from the simulated kubelet's endpoint on the node's InternalIP (127.0.0.1).
      '--kubelet-preferred-address-types=InternalIP',
      ...(options.watchCache === false ? ['--watch-cache=false'] : []),
      `-v=${verbosity}`,
      ...(extra.apiServer ?? []),
    ];
    // POD_NAMESPACE/POD_NAME: this build records its lifecycle Events there (default: `default`, where tests look).
    // With clients connected, this build's graceful termination stops listening at once but takes more than 10 s to
    // exit; the data is in etcd, so it is not waited for.
    const apiGraceMs = 2000;
    const apiEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      POD_NAMESPACE: 'kube-system',
      POD_NAME: 'kube-apiserver',
    };
    const tls = { ca: ca.cert, cert: admin.cert, key: admin.key };
    const apiReady = (port: number) => (): Promise<boolean> => answers200(`https://127.0.0.1:${port}/readyz`, tls);
    const [started, apiPort] = await launchOnPort('kube-apiserver', options.apiServerPort ?? 0, (port) =>
      launch(
        {
          name: 'kube-apiserver',
          binary: bin['kube-apiserver'],
          args: apiArgs(port),
          env: apiEnv,
          graceMs: apiGraceMs,
        },
        apiReady(port),
      ),
    );
    let apiServer = started;
    const url = `https://127.0.0.1:${apiPort}`;
    step('kube-apiserver ready');

    const kubeConfig = makeKubeConfig(url, ca.cert, admin, 'admin');
    const kubeconfigPath = path.join(dirs.kubeconfigs, 'admin.kubeconfig');
    await writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
    const componentKubeconfig = async (name: string, identity: Identity): Promise<string> => {
      const p = path.join(dirs.kubeconfigs, `${name}.kubeconfig`);
      await writeFile(p, makeKubeConfig(url, ca.cert, await ca.client(identity), name).exportConfig(), { mode: 0o600 });
      return p;
    };

    const core = kubeConfig.makeApiClient(CoreV1Api);
    // kube-apiserver makes it soon after it is ready; clients of a new control plane expect it.
    await waitFor('namespace default', () => core.readNamespace({ name: 'default' }), { timeoutMs });
    step('namespace default created');
    const binaries: Binary[] = ['etcd', 'kube-apiserver'];
    const skipped = (name: OptionalBinary, wanted: boolean | undefined): void =>
      step(`${name} not started (${wanted === false ? 'not asked for' : 'not in the folder'})`);

    if (kcmBinary === undefined) skipped('kube-controller-manager', options.controllerManager);
    else {
      const qps = options.controllerManagerQps ?? { qps: 20, burst: 30 };
      await launch(
        {
          name: 'kube-controller-manager',
          binary: kcmBinary,
          args: [
            `--kubeconfig=${await componentKubeconfig('kube-controller-manager', { user: 'system:kube-controller-manager' })}`,
            `--controllers=${options.controllers ?? '*,-service-ca-certificate-publisher-controller'}`,
            `--service-account-private-key-file=${saKey}`,
            '--use-service-account-credentials=true',
            `--root-ca-file=${caFile}`,
            `--cluster-signing-cert-file=${caFile}`,
            `--cluster-signing-key-file=${caKeyFile}`,
            '--leader-elect=false',
            '--bind-address=127.0.0.1',
            '--secure-port=0',
            `--pvclaimbinder-sync-period=${options.pvClaimBinderSyncPeriod ?? '15s'}`,
            `--kube-api-qps=${qps.qps}`,
            `--kube-api-burst=${qps.burst}`,
            `-v=${verbosity}`,
            ...(extra.controllerManager ?? []),
          ],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        },
        // Ready once it has made the default ServiceAccount and published the root CA (pods need both).
        async () => {
          await core.readNamespacedServiceAccount({ namespace: 'default', name: 'default' });
          await core.readNamespacedConfigMap({ namespace: 'default', name: 'kube-root-ca.crt' });
          return true;
        },
      );
      binaries.push('kube-controller-manager');
      step('kube-controller-manager ready (ServiceAccount default, ConfigMap kube-root-ca.crt)');
    }
    if (schedulerBinary === undefined) skipped('kube-scheduler', options.scheduler);
    else {
      await launchOnPort('kube-scheduler', 0, async (port) =>
        launch(
          {
            name: 'kube-scheduler',
            binary: schedulerBinary,
            args: [
              `--kubeconfig=${await componentKubeconfig('kube-scheduler', { user: 'system:kube-scheduler' })}`,
              '--leader-elect=false',
              '--bind-address=127.0.0.1',
              `--secure-port=${port}`,
              `-v=${verbosity}`,
              ...(extra.scheduler ?? []),
            ],
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          },
          () => answers200(`https://127.0.0.1:${port}/healthz`, {}),
        ),
      );
      binaries.push('kube-scheduler');
      step('kube-scheduler ready');
    }
    const crds = await applyCRDs(kubeConfig, crdFiles, options.crds?.timeoutMs ?? timeoutMs);
    if (crds.length > 0) step(`${crds.length} CustomResourceDefinition${crds.length === 1 ? '' : 's'} Established`);

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    return {
      url,
      kubeConfig,
      kubeconfigPath,
      dataDir,
      caCert: ca.cert,
      binaries,
      crds,
      logFile,
      async kubeConfigFor(identity) {
        return makeKubeConfig(url, ca.cert, await ca.client(identity), identity.user);
      },
      async serviceAccountKubeConfig(namespace, name) {
        const auth = kubeConfig.makeApiClient(CoreV1Api);
        const tr = await auth.createNamespacedServiceAccountToken({
          namespace,
          name,
          body: { spec: { audiences: [], expirationSeconds: 3600 } },
        });
        const token = tr.status?.token;
        if (token === undefined)
          throw new Error(`TokenRequest for service account ${namespace}/${name} returned no token`);
        return makeKubeConfig(url, ca.cert, { token }, `system:serviceaccount:${namespace}:${name}`);
      },
      async writeKubeconfig(target, identity = ADMIN) {
        const kc =
          identity === ADMIN ? kubeConfig : makeKubeConfig(url, ca.cert, await ca.client(identity), identity.user);
        await mkdir(path.dirname(path.resolve(target)), { recursive: true });
        await writeFile(target, kc.exportConfig(), { mode: 0o600 });
        return target;
      },
      async stopApiServer() {
        const i = running.indexOf(apiServer);
        if (i < 0) return;
        running.splice(i, 1);
        await apiServer.stop();
      },
      async startApiServer() {
        if (running.includes(apiServer)) return;
        // After the controllers: stop() goes in reverse, and they need no API server to stop.
        apiServer = await Component.start({ ...apiServer.spec, args: apiArgs(apiPort) }, apiReady(apiPort), timeoutMs);
        guardian.watch(apiServer.child.pid);
        running.push(apiServer);
      },
      async compact() {
        const key = Buffer.from('compact').toString('base64');
        const range = await request(`${etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key }) });
        const revision = Number((JSON.parse(range.body) as { header?: { revision?: string } }).header?.revision);
        if (!Number.isInteger(revision)) throw new Error(`etcd did not say its revision: ${range.body}`);
        const res = await request(`${etcdUrl}/v3/kv/compaction`, {
          method: 'POST',
          body: JSON.stringify({ revision: String(revision), physical: true }),
        });
        if (res.status !== 200)
          throw new Error(`etcd refused compaction at revision ${revision}: ${res.status} ${res.body}`);
        return revision;
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
