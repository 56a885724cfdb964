/**
 * local-path installed with `kubectl apply -f packages/local-path/deploy/local-path-storage.yaml` on a real node,
 * with the commands of docs/local-path.md's "Install" section: the scenarios both routes pass (helpers.ts,
 * `coreScenarios`), with the `setup` script edited by `kubectl patch`; and a burst of claims made while the
 * provisioner's pod is deleted (`kubectl delete pod`): it stops gracefully, and its replacement provisions the rest,
 * one PV per claim, leaving no directory or helper pod behind.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { terminatePod, waitFor } from '@kprov/testkit';
import { WAIT } from '@kprov/testkit/vitest';
import { expect, it } from 'vitest';
import {
  NAMESPACE,
  NODE,
  PROVISION_MS,
  basePathEntries,
  coreScenarios,
  describeDeployment,
  errorLines,
  exampleClaim,
  examplePod,
  helperPodsNow,
  holderPod,
  holders,
  install,
  volumeDir,
  waitBound,
  waitLeader,
  waitPhase,
  watchLease,
  watchNamespacePods,
} from './helpers.js';

/** How many claims the burst makes. */
const BURST = 20;

describeDeployment('local-path installed with kubectl apply -f deploy/local-path-storage.yaml', (tier) => {
  it('gets Ready, provisions a claim into its directory, keeps it for the next pod, removes it; a failing setup script shows in the Event', async () => {
    const cluster = await tier.start({ nodes: [{ name: NODE }] });
    const i = await install(cluster, 'manifest');
    await coreScenarios(i, async (script) => {
      await i.kubectl(
        'patch',
        'configmap',
        'local-path-config',
        `--namespace=${NAMESPACE}`,
        '--type=merge',
        '-p',
        JSON.stringify({ data: { setup: script } }),
      );
    });
  });

  it(`provisions ${BURST} claims made while its pod is deleted: it stops gracefully, each claim gets one PV, nothing is left over`, async () => {
    const cluster = await tier.start({ nodes: [{ name: NODE }] });
    const i = await install(cluster, 'manifest');
    const { read } = i;
    const pods = await watchNamespacePods(cluster);
    const leader = await waitLeader(i, () => true, 'the provisioner');
    const lease = await watchLease(i);

    const names = Array.from({ length: BURST }, (_, n) => `burst-${n + 1}`);
    await i.apply(
      'burst.yaml',
      ...names.flatMap((name) => [
        exampleClaim(name),
        examplePod(name, name, 'echo "$HOSTNAME" > /data/owner', 'Never'),
      ]),
    );
    // The first helper pod: the provisioner is at work on the claims. `kubectl delete pod` now.
    await waitFor(
      'the first setup helper pod',
      () => (pods.events.some((e) => e.object.metadata?.name?.startsWith('helper-pod-create-')) ? true : undefined),
      { timeoutMs: PROVISION_MS, intervalMs: WAIT.interval },
    );
    const [stopped] = await terminatePod(cluster.kubeConfig, NAMESPACE, leader);
    const madeBeforeStop = (await read.volumes()).length;
    expect(stopped?.exitCode).toBe(0);
    expect(errorLines(stopped?.log ?? '')).toEqual([]);
    expect(stopped?.log).toContain('Receive SIGTERM to exit');

    // The Deployment's new pod takes over and provisions the rest.
    await i.rolloutStatus();
    const claims = new Map<string, string>();
    for (const name of names) claims.set(name, await waitBound(read, name));
    for (const name of names) await waitPhase(read, name, 'Succeeded');
    expect(madeBeforeStop).toBeLessThan(BURST);

    const volumes = await read.volumes();
    expect(volumes.map((v) => v.spec?.claimRef?.name).sort()).toEqual([...names].sort());
    for (const v of volumes) {
      const claim = await read.claim(v.spec?.claimRef?.name ?? '');
      expect(v.spec?.claimRef?.uid).toBe(claim?.metadata?.uid);
      expect(claim?.spec?.volumeName).toBe(v.metadata?.name);
    }
    expect(basePathEntries(cluster)).toEqual(names.map((n) => `${claims.get(n)}_default_${n}`).sort());
    for (const name of names)
      expect(readFileSync(path.join(volumeDir(cluster, claims.get(name) ?? '', name), 'owner'), 'utf8')).toBe(
        `${name}\n`,
      );
    await waitFor('no helper pod left', async () => ((await helperPodsNow(read)).length === 0 ? true : undefined), {
      timeoutMs: PROVISION_MS,
      intervalMs: WAIT.interval,
    });

    // The stopped leader gave the Lease up; the new pod took it.
    const newLeader = await waitLeader(i, (p) => p !== leader, 'the new pod');
    expect(holders(lease).map(holderPod)).toEqual([leader, '', newLeader]);
  });
});
