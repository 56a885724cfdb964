/**
 * What a program gives the ProvisionController instead of letting it make its own, on the testkit and on a real
 * control plane: its Event recorder (the controller's Events go through it, and it outlives the controller) and its
 * informers (the controller shares them: each resource is listed and watched once, and they keep running after the
 * controller stopped). Requests are counted where the server sees them: the testkit's request counts, and on the real
 * tier kube-apiserver's audit log of the test's own user.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Cluster } from '@kprov/testkit';
import { describeTiers } from '@kprov/testkit/vitest';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { informerFor, type Informer, type InformerKind, type InformerKinds } from '../../src/cache/informer.js';
import { makeProvisionControllerClient } from '../../src/controller/client.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import { EventRecorder } from '../../src/events/recorder.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';
import {
  apiOf,
  createClaim,
  createClass,
  deleteClaims,
  eventsAbout,
  getVolume,
  waitBound,
  WAIT,
  type Api,
} from '../support/cluster.js';
import { FakeBackend, startController, Timeline, type RunningController } from '../support/scene.js';

const PROVISIONER = 'example.com/injected';
const CLASS = 'injected';
/** The user the test's informers and controller act as on the real tier, so the audit log tells their requests apart. */
const USER = 'injection-test';
const RESOURCES = ['persistentvolumeclaims', 'persistentvolumes', 'storageclasses'] as const;

// kube-apiserver writes an audit line for each request of USER (none for anyone else), once it is answered.
const auditDir = mkdtempSync(path.join(tmpdir(), 'kprov-audit-'));
const auditPolicy = path.join(auditDir, 'policy.yaml');
const auditLog = path.join(auditDir, 'audit.log');
writeFileSync(
  auditPolicy,
  [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: ["RequestReceived"]',
    'rules:',
    '- level: Metadata',
    `  users: ["${USER}"]`,
    '- level: None',
    '',
  ].join('\n'),
);
afterAll(() => rmSync(auditDir, { recursive: true, force: true }));

interface AuditEvent {
  auditID: string;
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string };
}

/** Where the audit log ends now: requests logged after this are the running test's. */
function auditMark(): number {
  return existsSync(auditLog) ? readFileSync(auditLog).length : 0;
}

/**
 * Lists and watches the server served per resource since the counts were reset (testkit) or since `mark` (real
 * tier: the test user's only). On the testkit the test's own calls neither list nor watch.
 */
function listsAndWatches(cluster: Cluster, mark: number): Record<string, { list: number; watch: number }> {
  const out: Record<string, { list: number; watch: number }> = {};
  if (cluster.testkit !== undefined) {
    const counts = cluster.testkit.server.requestCounts();
    for (const r of RESOURCES) out[r] = { list: counts[`list ${r}`] ?? 0, watch: counts[`watch ${r}`] ?? 0 };
    return out;
  }
  const seen = new Map<string, AuditEvent>();
  for (const line of readFileSync(auditLog).subarray(mark).toString('utf8').split('\n')) {
    if (line.trim() === '') continue;
    const e = JSON.parse(line) as AuditEvent;
    if (e.user.username === USER) seen.set(e.auditID, e);
  }
  for (const r of RESOURCES) {
    const mine = [...seen.values()].filter((e) => e.objectRef?.resource === r);
    out[r] = {
      list: mine.filter((e) => e.verb === 'list').length,
      watch: mine.filter((e) => e.verb === 'watch').length,
    };
  }
  return out;
}

describeTiers(
  'ProvisionController with what the program gives it',
  (tier) => {
    const stops: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    /** A cluster, the administrator's API, and the test user's KubeConfig (the administrator's on the testkit). */
    const start = async (): Promise<{ cluster: Cluster; api: Api; kubeConfig: KubeConfig }> => {
      const cluster = await tier.start({ nodes: [], testkit: { scheduler: false, kubelet: false } });
      const kubeConfig =
        cluster.controlPlane === undefined
          ? cluster.kubeConfig
          : await cluster.controlPlane.kubeConfigFor({ user: USER, groups: ['system:masters'] });
      const api = apiOf(cluster);
      await createClass(api, CLASS, PROVISIONER);
      return { cluster, api, kubeConfig };
    };

    const run = (
      kubeConfig: KubeConfig,
      backend: FakeBackend,
      options: Partial<ProvisionControllerOptions>,
    ): RunningController => {
      const rc = startController(kubeConfig, backend.timeline, 'injected', {
        provisionerName: PROVISIONER,
        provisioner: backend.provisioner('injected'),
        leaderElection: false,
        rateLimiter: new ItemExponentialFailureRateLimiter<string>(10, 100),
        createProvisionedPVIntervalMs: 20,
        ...options,
      });
      stops.push(async () => {
        rc.abort.abort();
        await rc.running;
      });
      return rc;
    };

    /** Starts an informer as a program would, stopped after the test. */
    const runInformer = <K extends InformerKind>(kubeConfig: KubeConfig, kind: K): Informer<InformerKinds[K]> => {
      const informer = informerFor(kubeConfig, kind);
      const abort = new AbortController();
      const running = informer.run(abort.signal);
      stops.push(async () => {
        abort.abort();
        await running;
      });
      return informer;
    };

    it("records the controller's Events through the program's recorder, which stays the program's after the controller stopped", async () => {
      const { api, kubeConfig } = await start();
      const recorder = new EventRecorder({ kubeConfig, source: { component: 'my-program' } });
      stops.push(async () => {
        recorder.shutDown();
        await recorder.flush();
      });
      const rc = run(kubeConfig, new FakeBackend(new Timeline()), { eventRecorder: recorder });
      const claim = await createClaim(api, 'data', CLASS);
      const uid = claim.metadata?.uid ?? '';
      await waitBound(api, 'data');

      await vi.waitFor(async () => {
        const events = await eventsAbout(api, 'default', uid);
        expect(events.get('Provisioning')?.source).toEqual({ component: 'my-program' });
        expect(events.get('ProvisioningSucceeded')?.source).toEqual({ component: 'my-program' });
      }, WAIT);

      // The controller leaves the recorder running: the program's own Events still go out after it stopped.
      rc.abort.abort();
      await rc.running;
      recorder.event(
        { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'data', uid },
        'Normal',
        'Checked',
        'after the controller',
      );
      await vi.waitFor(async () => {
        const checked = (await eventsAbout(api, 'default', uid)).get('Checked');
        expect(checked).toMatchObject({ source: { component: 'my-program' }, message: 'after the controller' });
      }, WAIT);
    });

    it('shares the informers it is given: each resource is listed and watched once, and they outlive the controller', async () => {
      const { cluster, api, kubeConfig } = await start();
      cluster.testkit?.server.resetRequestCounts();
      const mark = auditMark();
      const claims = runInformer(kubeConfig, 'PersistentVolumeClaim');
      const volumes = runInformer(kubeConfig, 'PersistentVolume');
      const classes = runInformer(kubeConfig, 'StorageClass');
      const backend = new FakeBackend(new Timeline());
      const rc = run(kubeConfig, backend, {
        claimsInformer: claims,
        volumesInformer: volumes,
        classesInformer: classes,
        client: makeProvisionControllerClient(kubeConfig, { userAgent: 'my-program' }),
      });
      await vi.waitFor(() => expect(rc.controller.hasSynced()).toBe(true), WAIT);

      // The whole life of a volume, all of it seen through the shared caches.
      const uid = (await createClaim(api, 'data', CLASS)).metadata?.uid ?? '';
      const pvName = `pvc-${uid}`;
      await waitBound(api, 'data');
      await deleteClaims(api, ['data']);
      await vi.waitFor(async () => expect(await getVolume(api, pvName)).toBeUndefined(), WAIT);
      expect(backend.deletes.map((d) => [d.pvName, d.removed])).toEqual([[pvName, true]]);

      // The controller stopped; the program's informers go on.
      rc.abort.abort();
      await rc.running;
      await api.core.createNamespacedPersistentVolumeClaim({
        namespace: 'default',
        body: {
          metadata: { name: 'later' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Mi' } },
            storageClassName: CLASS,
          },
        },
      });
      await vi.waitFor(() => expect(claims.store.get('default/later')).toBeDefined(), WAIT);
      expect(backend.provisions.map((p) => p.claimName)).toEqual(['data']);

      await vi.waitFor(
        () =>
          expect(listsAndWatches(cluster, mark)).toEqual({
            persistentvolumeclaims: { list: 1, watch: 1 },
            persistentvolumes: { list: 1, watch: 1 },
            storageclasses: { list: 1, watch: 1 },
          }),
        WAIT,
      );
    });

    it('takes up what a shared informer had cached before the controller started', async () => {
      const { api, kubeConfig } = await start();
      const claims = runInformer(kubeConfig, 'PersistentVolumeClaim');
      await createClaim(api, 'early', CLASS);
      await vi.waitFor(() => expect(claims.store.get('default/early')).toBeDefined(), WAIT);
      run(kubeConfig, new FakeBackend(new Timeline()), { claimsInformer: claims });
      await waitBound(api, 'early');
    });
  },
  {
    controlPlane: { extraArgs: { apiServer: [`--audit-policy-file=${auditPolicy}`, `--audit-log-path=${auditLog}`] } },
  },
);
