/**
 * local-path installed with `helm install` of packages/local-path/deploy/chart/local-path-provisioner on a real node,
 * with the commands of docs/local-path.md's "Install" section and a real helm: the scenarios both routes pass
 * (helpers.ts, `coreScenarios`), with the `setup` script changed by `helm upgrade --set-file configmap.setup=...`;
 * and two replicas (`--set replicaCount=2`): the leader stopped by `kubectl delete pod` exits 0 and gives its Lease
 * up, so that another pod (the other replica, or the Deployment's new one if it starts first) takes over before the
 * Lease would have expired; and a `kubectl rollout restart` hands the Lease to a pod of the new ReplicaSet, each time
 * through a release.
 */
import path from 'node:path';
import { terminatePod } from '@kprov/testkit';
import { expect, it } from 'vitest';
import {
  DEPLOYMENT,
  NAMESPACE,
  NODE,
  ROOT,
  coreScenarios,
  describeDeployment,
  errorLines,
  followLogs,
  holderPod,
  holders,
  install,
  waitLeader,
  watchLease,
} from './helpers.js';

/** The release of the doc's `helm install`. */
const RELEASE = 'local-path-provisioner';
const CHART = path.join(ROOT, 'packages/local-path/deploy/chart/local-path-provisioner');

describeDeployment('local-path installed with helm install of deploy/chart/local-path-provisioner', (tier) => {
  it('gets Ready, provisions a claim into its directory, keeps it for the next pod, removes it; a failing setup script shows in the Event', async () => {
    const cluster = await tier.start({ nodes: [{ name: NODE }] });
    const i = await install(cluster, 'chart');
    await coreScenarios(i, async (script) => {
      const file = await i.scratch('setup.sh', script);
      await i.helm(
        'upgrade',
        RELEASE,
        CHART,
        `--namespace=${NAMESPACE}`,
        '--reuse-values',
        `--set-file=configmap.setup=${file}`,
      );
    });
  });

  it('with two replicas, hands the Lease over at once when its leader is deleted and to the new ReplicaSet on a rollout restart', async () => {
    const cluster = await tier.start({ nodes: [{ name: NODE }] });
    const i = await install(cluster, 'chart', ['--set', 'replicaCount=2']);
    const replicas = (await i.provisionerPods()).map((p) => p.metadata?.name ?? '');
    expect(replicas).toHaveLength(2);
    const leader = await waitLeader(i, (p) => replicas.includes(p), 'a replica');
    const lease = await watchLease(i);

    // `kubectl delete pod` of the leader: SIGTERM, a graceful stop, the Lease given up.
    const [stopped] = await terminatePod(cluster.kubeConfig, NAMESPACE, leader);
    expect(stopped?.exitCode).toBe(0);
    expect(errorLines(stopped?.log ?? '')).toEqual([]);
    expect(stopped?.log).toContain('Receive SIGTERM to exit');
    // The other replica, or the Deployment's new pod if it starts first: not the stopped leader, and not the holder
    // of an expired Lease but of a released one.
    const next = await waitLeader(i, (p) => p !== leader, 'another pod');
    expect(holders(lease).map(holderPod)).toEqual([leader, '', next]);
    expect((await i.provisionerPods()).map((p) => p.metadata?.name)).toContain(next);
    // Taken before the stopped leader's last renewal would have expired: without the release no other pod could
    // have taken it before the lease duration had passed.
    const records = lease.events.map((e) => e.object.spec ?? {});
    const last = records.filter((r) => holderPod(r.holderIdentity) === leader).at(-1);
    const taken = records.find((r) => holderPod(r.holderIdentity) === next);
    expect(new Date(taken?.acquireTime ?? 0).getTime()).toBeLessThan(
      new Date(last?.renewTime ?? 0).getTime() + (last?.leaseDurationSeconds ?? 0) * 1000,
    );

    // kubectl rollout restart: every old pod is replaced; a new one ends up holding the Lease.
    await i.rolloutStatus();
    const before = new Set((await i.provisionerPods()).map((p) => p.metadata?.name ?? ''));
    const logOf = followLogs(i, before);
    await i.kubectl('rollout', 'restart', `deployment/${DEPLOYMENT}`, `--namespace=${NAMESPACE}`);
    await i.rolloutStatus();
    const after = await i.provisionerPods();
    const hashes = new Set(after.map((p) => p.metadata?.labels?.['pod-template-hash']));
    expect(after.filter((p) => before.has(p.metadata?.name ?? ''))).toEqual([]);
    expect(hashes.size).toBe(1);
    const names = after.map((p) => p.metadata?.name ?? '');
    await waitLeader(i, (p) => names.includes(p), 'a pod of the new ReplicaSet');
    // Each change of holder went through a release: never from one holder straight to the next.
    const sequence = holders(lease).map(holderPod);
    const lastWords = [...before].map((p) => `${p}:\n${logOf(p).trimEnd().split('\n').slice(-15).join('\n')}`);
    sequence.forEach((holder, n) => {
      if (n > 0 && holder !== '')
        expect(
          sequence[n - 1],
          `before ${holder} in ${sequence.join(' > ')}; the replaced pods' last log lines:\n${lastWords.join('\n')}`,
        ).toBe('');
    });
  });
});
