import { startApiServer } from '@kprov/testkit';
import { describe, expect, it } from 'vitest';
import { LeaderElectionLostError, ProvisionController } from '../../src/controller/controller.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';
import { started } from '../support/scene.js';
import { testProvisioner } from './fixtures.js';

describe('ProvisionController.run', () => {
  it('rejects with LeaderElectionLostError when the Lease cannot be renewed, also with the background PV store', async () => {
    const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    const controller = new ProvisionController({
      kubeConfig: kit.kubeConfig,
      provisionerName: 'foo.bar/baz',
      provisioner: testProvisioner(),
      leaderElectionNamespace: 'default',
      // Real time: a renew deadline a busy machine does not miss before the test makes every renewal fail.
      leaseDurationMs: 6000,
      renewDeadlineMs: 5000,
      retryPeriodMs: 100,
      createProvisionedPVLimiter: new ItemExponentialFailureRateLimiter<string>(1, 1000),
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    await started(controller, running);
    kit.faults.add({ resource: 'leases', action: { type: 'error', code: 500 } });
    await expect(running).rejects.toBeInstanceOf(LeaderElectionLostError);
    expect(stop.signal.aborted).toBe(false);
    expect(controller.hasSynced()).toBe(false);
    stop.abort();
    await kit.stop();
  });

  it('resolves after a requested stop once in-flight work is done', async () => {
    const kit = await startApiServer({ nodes: [], binder: false, scheduler: false, kubelet: false });
    const controller = new ProvisionController({
      kubeConfig: kit.kubeConfig,
      provisionerName: 'foo.bar/baz',
      provisioner: testProvisioner(),
      leaderElection: false,
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    await started(controller, running);
    stop.abort();
    await expect(running).resolves.toBeUndefined();
    expect(kit.server.openWatches).toBe(0);
    await kit.stop();
  });
});
