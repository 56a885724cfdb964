// One local-path run of `pnpm bench`: a fresh server (`kprov-testkit serve` with binder, scheduler and kubelet on,
// or a real control plane with the testkit's kubelet; a few nodes rooted in a temporary folder), the deploy
// manifest's ConfigMap, ServiceAccount and StorageClass, the local-path-provisioner binary as a child process (helper
// mode: one, through real helper pods; node mode: one per node, `--node-mode`, directories made in-process), then
// `claims` PVCs, checked on disk, then deleted. See bench/README.md.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { checkDirectories, remainingDirectories } from './local-path-disk.js';
import { deployObjects } from './local-path-deploy.js';
import { startProvisioner } from './local-path-process.js';
import { startLocalPathServer } from './local-path-server.js';
import { cpuMeter } from './cpu.js';
import { latencyProbe } from './probe.js';
import { k8s, lib, loadKubeConfig, now, percentile, pool } from './common.js';
import { watchCollection } from './watch.js';
import { until } from './until.js';

const SELECTED_NODE = 'volume.kubernetes.io/selected-node';
const PV_SELECTED_NODE = 'local.path.provisioner/selected-node';

function latencies(from, to) {
  const xs = [];
  for (const [key, t] of to) {
    const f = from.get(key);
    if (f !== undefined) xs.push(t - f);
  }
  xs.sort((a, b) => a - b);
  return {
    p50: percentile(xs, 50),
    p95: percentile(xs, 95),
    p99: percentile(xs, 99),
    max: xs.at(-1) ?? NaN,
    n: xs.length,
  };
}

/**
 * Runs one setting and resolves with its figures. `env` carries what the driver owns: `tmpRoot` (the run's folder
 * goes under it and is removed afterwards), `track` (a Set every child process is added to, for cleanup on Ctrl-C),
 * `log`, `aborted()`, `node` (how to start the provisioners' Node.js, see `nodeLauncher`). `setting`: `{ tier, mode,
 * claims, workers, qps, burst, nodes, createConcurrency, warmup, timeoutMs }`, `tier` being `testkit` or `real` and
 * `mode` `helper` (helper pods) or `node` (node mode).
 */
export async function localPathRun(setting, env) {
  const { tier, mode, claims, workers, nodes: nodeCount, createConcurrency, timeoutMs } = setting;
  const label = `local-path ${tier} ${mode} mode ${claims} PVCs, ${workers} workers`;
  const log = (m) => env.log(`${label}: ${m}`);
  const deploy = await deployObjects();
  const dir = await mkdtemp(join(env.tmpRoot, `local-path-${tier}-${mode}-${claims}-${workers}-`));
  const nodes = Array.from({ length: nodeCount }, (_, i) => ({
    name: `node-${i + 1}`,
    root: join(dir, 'nodes', `node-${i + 1}`),
  }));
  const roots = new Map(nodes.map((n) => [n.name, n.root]));
  for (const n of nodes) await mkdir(n.root, { recursive: true });
  const stoppers = [];
  try {
    if (env.aborted()) throw new Error('stopped');
    if (tier === 'real') log('starting a control plane and the kubelet');
    const server = await startLocalPathServer(tier, { dir, nodes, track: env.track });
    stoppers.push(() => server.stop());
    const kc = loadKubeConfig(server.kubeconfig);
    stoppers.push(() =>
      lib
        .sharedAgent(kc)
        .close()
        .catch(() => undefined),
    );
    const core = lib.makeApiClient(kc, k8s.CoreV1Api);
    const storage = lib.makeApiClient(kc, k8s.StorageV1Api);
    if (setting.warmup > 0) {
      await pool(setting.warmup, 8, (i) =>
        core.createNamespacedConfigMap({
          namespace: 'default',
          body: { metadata: { name: `warmup-${i}` }, data: { i: String(i) } },
        }),
      );
    }
    await core.createNamespace({ body: { metadata: { name: deploy.namespace } } });
    await core.createNamespacedConfigMap({ namespace: deploy.namespace, body: deploy.configMap });
    await core.createNamespacedServiceAccount({ namespace: deploy.namespace, body: deploy.serviceAccount });
    await storage.createStorageClass({ body: deploy.storageClass });

    // What the driver sees: claims Bound, PVs created and deleted, helper pods run (and how they ended).
    const bound = new Map();
    const volumeOf = new Map();
    const pvs = new Map();
    const pvAdded = new Map();
    const pvDeleted = new Map();
    const helperPods = new Map();
    const watchErrors = [];
    const onError = (what) => (type, object) => {
      if (type === 'ERROR') watchErrors.push(`${what}: ${object?.message ?? JSON.stringify(object)}`);
    };
    const watches = [
      await watchCollection(kc, '/api/v1/namespaces/default/persistentvolumeclaims', (type, pvc) => {
        onError('PVC watch')(type, pvc);
        const uid = pvc?.metadata?.uid;
        if (type !== 'DELETED' && pvc?.status?.phase === 'Bound' && !bound.has(uid)) {
          bound.set(uid, now());
          volumeOf.set(uid, pvc.spec?.volumeName ?? '');
        }
      }),
      await watchCollection(kc, '/api/v1/persistentvolumes', (type, pv) => {
        onError('PV watch')(type, pv);
        const name = pv?.metadata?.name;
        if (type === 'DELETED') pvDeleted.set(name, now());
        else if (type !== 'ERROR') {
          pvs.set(name, pv);
          const claimUid = pv?.spec?.claimRef?.uid;
          if (claimUid !== undefined && !pvAdded.has(claimUid)) pvAdded.set(claimUid, now());
        }
      }),
      await watchCollection(kc, `/api/v1/namespaces/${deploy.namespace}/pods`, (type, pod) => {
        onError('helper pod watch')(type, pod);
        const uid = pod?.metadata?.uid;
        if (uid === undefined || type === 'ERROR') return;
        const phase = pod.status?.phase ?? 'Pending';
        const t = now();
        let seen = helperPods.get(uid);
        if (seen === undefined) {
          seen = { phase, added: t, done: undefined };
          helperPods.set(uid, seen);
        }
        if (phase !== 'Pending' && phase !== 'Running') {
          seen.phase = phase;
          seen.done ??= t;
        }
      }),
    ];
    stoppers.push(() => {
      for (const w of watches) w.stop();
    });

    if (env.aborted()) throw new Error('stopped');
    // Helper mode: one provisioner for every node. Node mode: one per node, its root as the node's file system.
    const common = {
      kubeconfig: server.kubeconfig,
      namespace: deploy.namespace,
      workers,
      qps: setting.qps,
      burst: setting.burst,
    };
    const provisioners = [];
    stoppers.push(async () => {
      for (const p of provisioners) {
        await p.stop();
        env.track.delete(p.child);
      }
    });
    const perProcess =
      mode === 'node' ? nodes.map((n) => ({ ...common, nodeMode: { nodeName: n.name, hostRoot: n.root } })) : [common];
    await Promise.all(
      perProcess.map(async (settings) => provisioners.push(await startProvisioner(settings, env.track, env.node))),
    );
    log(`${provisioners.length} provisioner(s) started (pid ${provisioners.map((p) => p.child.pid).join(', ')})`);
    const meter = cpuMeter(
      { ...server.pids, provisioner: provisioners.map((p) => p.child.pid) },
      { shellsOf: server.shellsOf },
    );
    const probe = latencyProbe(() => core.readNamespace({ name: 'default' }));

    // ---- provisioning -------------------------------------------------------------------------------------
    const created = new Map();
    const selectedNode = new Map();
    const claimName = new Map();
    meter.start();
    probe.start();
    await pool(claims, createConcurrency, async (i) => {
      const node = nodes[i % nodes.length].name;
      const pvc = await core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: `claim-${i}`, annotations: { [SELECTED_NODE]: node } },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: deploy.storageClass.metadata.name,
            resources: { requests: { storage: '1Gi' } },
          },
        },
      });
      const uid = pvc.metadata?.uid ?? '';
      created.set(uid, now());
      selectedNode.set(uid, node);
      claimName.set(uid, pvc.metadata?.name ?? '');
    });
    log(`${claims} PVCs created`);
    const allBound = await until(() => bound.size >= claims || watchErrors.length > 0, timeoutMs);
    const provisionCpu = meter.stop();
    const provisionLag = probe.stop();
    const helperPodsForSetup = helperPods.size;
    log(allBound ? 'all Bound' : `timed out with ${bound.size} of ${claims} Bound`);
    // The PV informer may trail the last Bound claim by a moment.
    await until(() => [...volumeOf.values()].every((v) => pvs.has(v)), 5_000);
    const disk = await checkDirectories({
      created,
      volumeOf,
      pvs,
      selectedNode,
      claimName,
      roots,
      basePath: deploy.basePath,
      mode: deploy.dirMode,
      pvNodeAnnotation: PV_SELECTED_NODE,
    });
    log(
      `directories: ${disk.ok} ok, ${disk.missing} missing, ${disk.wrongMode} wrong mode, ${disk.wrongNode} on the wrong node`,
    );

    // ---- deletion -----------------------------------------------------------------------------------------
    const deleteSent = new Map();
    const expectedDirs = disk.dirs;
    let dirsGoneAt = NaN;
    meter.start();
    probe.start();
    const deleteStart = now();
    await pool(claims, createConcurrency, async (i) => {
      await core.deleteNamespacedPersistentVolumeClaim({ name: `claim-${i}`, namespace: 'default' });
      deleteSent.set(`claim-${i}`, now());
    });
    log(`${claims} PVCs deleted`);
    const volumes = [...volumeOf.values()];
    const allGone = await until(async () => {
      if (watchErrors.length > 0) return true;
      if (!volumes.every((v) => pvDeleted.has(v))) return false;
      if (Number.isNaN(dirsGoneAt) && (await remainingDirectories(expectedDirs)) === 0) dirsGoneAt = now();
      return !Number.isNaN(dirsGoneAt);
    }, timeoutMs);
    const deleteCpu = meter.stop();
    const deleteLag = probe.stop();
    const dirsLeft = await remainingDirectories(expectedDirs);
    log(
      allGone && dirsLeft === 0
        ? 'all PVs and directories gone'
        : `timed out: ${volumes.filter((v) => !pvDeleted.has(v)).length} PVs and ${dirsLeft} directories left`,
    );

    // Per claim: delete response → PV deleted (the teardown helper pod, or the node's provisioner, removed the
    // directory before the PV is deleted).
    const deleteByVolume = new Map();
    for (const [uid, v] of volumeOf) {
      const t = deleteSent.get(claimName.get(uid));
      if (t !== undefined) deleteByVolume.set(v, t);
    }
    const firstCreated = Math.min(...created.values());
    const lastBound = Math.max(...bound.values());
    const firstDeleted = Math.min(...deleteSent.values());
    const lastPvDeleted = Math.max(...volumes.map((v) => pvDeleted.get(v) ?? NaN));
    const deleteEnd = Math.max(lastPvDeleted, dirsGoneAt);
    const phases = { Succeeded: 0, Failed: 0, other: 0 };
    for (const p of helperPods.values())
      phases[p.phase === 'Succeeded' || p.phase === 'Failed' ? p.phase : 'other'] += 1;
    const helperAdded = new Map([...helperPods].map(([uid, p]) => [uid, p.added]));
    const helperDone = new Map(
      [...helperPods].filter(([, p]) => p.done !== undefined).map(([uid, p]) => [uid, p.done]),
    );
    const complete = allBound && allGone && dirsLeft === 0 && watchErrors.length === 0;
    return {
      tier,
      mode,
      claims,
      workers,
      qps: setting.qps,
      burst: setting.burst,
      nodes: nodeCount,
      provisioners: provisioners.length,
      leaderElection: false,
      complete,
      bound: bound.size,
      provision: {
        spanMs: lastBound - firstCreated,
        perSecond: (bound.size / (lastBound - firstCreated)) * 1000,
        latencyMs: latencies(created, bound),
        pvLatencyMs: latencies(created, pvAdded),
        cpu: provisionCpu,
        serverLagMs: provisionLag,
      },
      disk: { ...disk, dirs: undefined },
      delete: {
        spanMs: deleteEnd - firstDeleted,
        perSecond: (claims / (deleteEnd - firstDeleted)) * 1000,
        requestsMs: now() - deleteStart,
        latencyMs: latencies(deleteByVolume, pvDeleted),
        pvsDeleted: volumes.filter((v) => pvDeleted.has(v)).length,
        dirsLeft,
        cpu: deleteCpu,
        serverLagMs: deleteLag,
      },
      helperPods: {
        total: helperPods.size,
        forSetup: helperPodsForSetup,
        forTeardown: helperPods.size - helperPodsForSetup,
        ...phases,
        // Created → Succeeded or Failed, as the driver's watch sees it: the kubelet's share of each helper pod.
        runMs: latencies(helperAdded, helperDone),
      },
      watchErrors,
      provisionerOutputTail: complete ? [] : provisioners.flatMap((p) => p.tail()),
    };
  } finally {
    for (const stop of stoppers.reverse()) await stop();
    await rm(dir, { recursive: true, force: true });
  }
}
