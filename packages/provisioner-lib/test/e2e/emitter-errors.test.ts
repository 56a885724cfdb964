/**
 * What listeners of the controller's `provisionFailed`, `deleteFailed` and `gaveUp` events get when the API server
 * refuses a write, on both tiers: the same clean error the Kubernetes Event shows (status code, reason and the
 * server's message in an ApiStatusError), not client-node's raw `HTTP-Code: 403 Message: Unknown API Status Code!
 * Body: …`. The refusal is real RBAC on the real tier (a user without the permission) and an injected 403 on the
 * testkit.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { afterEach, expect, it, vi } from 'vitest';
import { ApiStatusError } from '../../src/client/api-errors.js';
import type { ProvisionControllerOptions } from '../../src/controller/options.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';
import {
  CONTROLLER_REASONS,
  controllerRules,
  createClaim,
  createClass,
  deleteClaims,
  eventSummary,
  getVolume,
  grant,
  waitBound,
  WAIT,
} from '../support/cluster.js';
import { startController, startScene, type RunningController, type Scene } from '../support/scene.js';

const PROVISIONER = 'example.com/errors';
const CLASS = 'errors';
const USER = 'errors-provisioner';

/** kube-apiserver ends the denial of a cluster-scoped resource with "at the cluster scope"; the testkit's does not. */
const forbidden = (verb: string, name?: string): RegExp =>
  new RegExp(
    `^persistentvolumes${name === undefined ? '' : ` "${name}"`} is forbidden: User "[^"]+" cannot ${verb} resource "persistentvolumes" in API group ""( at the cluster scope)?$`,
  );

/** The error a listener got, as plain data: what the test asserts on. */
function shape(err: Error): Record<string, unknown> {
  return {
    type: err.constructor.name,
    code: (err as ApiStatusError).code,
    reason: (err as ApiStatusError).reason,
    message: err.message,
    cause: err.cause instanceof ApiException,
  };
}

describeTiers('The errors controller events give to listeners', (tier) => {
  let scene: Scene | undefined;
  let controllers: RunningController[] = [];
  afterEach(async () => {
    for (const r of controllers) r.abort.abort();
    await Promise.all(controllers.map((r) => r.running));
    controllers = [];
    scene?.history.stop();
    scene = undefined;
  });

  /**
   * A controller that may not `verb` PVs: as a user without that permission on the real tier, through an injected
   * 403 on the testkit.
   */
  const runDenied = async (
    s: Scene,
    verb: 'create' | 'delete',
    options: Partial<ProvisionControllerOptions> = {},
  ): Promise<RunningController> => {
    let kubeConfig: KubeConfig = s.cluster.kubeConfig;
    const kit = s.cluster.testkit;
    if (kit !== undefined) {
      kit.faults.add({ verb, resource: 'persistentvolumes', action: { type: 'error', code: 403 } });
    } else {
      await grant(s.api, USER, USER, controllerRules({ persistentvolumes: [verb] }));
      kubeConfig = await (s.cluster.controlPlane?.kubeConfigFor({ user: USER }) as Promise<KubeConfig>);
    }
    const rc = startController(kubeConfig, s.timeline, 'errors', {
      provisionerName: PROVISIONER,
      provisioner: s.backend.provisioner('errors'),
      leaderElection: false,
      resyncPeriodMs: 60_000,
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(10, 100),
      createProvisionedPVRetryCount: 1,
      createProvisionedPVIntervalMs: 10,
      ...options,
    });
    controllers.push(rc);
    return rc;
  };

  it('provisionFailed and gaveUp get the Status of a PV create the server refused, as the ProvisioningFailed Event says it', async () => {
    const s = (scene = await startScene(tier));
    await createClass(s.api, CLASS, PROVISIONER);
    const rc = await runDenied(s, 'create', { failedProvisionThreshold: 1 });
    const failed: Error[] = [];
    const gaveUp: Error[] = [];
    rc.controller.on('provisionFailed', (_claim, err) => failed.push(err));
    rc.controller.on('gaveUp', (_kind, _key, err) => gaveUp.push(err));
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';

    await vi.waitFor(() => expect(gaveUp).toHaveLength(1), WAIT);
    expect(failed).toHaveLength(2);
    for (const err of [...failed, ...gaveUp]) {
      expect(err).toBeInstanceOf(ApiStatusError);
      expect(shape(err)).toEqual({
        type: 'ApiStatusError',
        code: 403,
        reason: 'Forbidden',
        message: expect.stringMatching(forbidden('create')),
        cause: true,
      });
      expect(err.message).not.toContain('HTTP-Code');
    }
    await vi.waitFor(
      async () =>
        expect((await eventSummary(s.api, 'default', uid, CONTROLLER_REASONS)).ProvisioningFailed).toEqual({
          count: 2,
          message: `Error creating provisioned PV object for claim default/data: ${failed[0]?.message}. Deleting the volume.`,
        }),
      WAIT,
    );
  });

  it('deleteFailed gets the Status of a PV delete the server refused', async () => {
    const s = (scene = await startScene(tier));
    await createClass(s.api, CLASS, PROVISIONER);
    const rc = await runDenied(s, 'delete', { failedDeleteThreshold: 1 });
    const failed: Error[] = [];
    rc.controller.on('deleteFailed', (_volume, err) => failed.push(err));
    const uid = (await createClaim(s.api, 'data', CLASS)).metadata?.uid ?? '';
    const pvName = `pvc-${uid}`;
    await waitBound(s.api, 'data');

    await deleteClaims(s.api, ['data']);
    await vi.waitFor(() => expect(failed.length).toBeGreaterThanOrEqual(1), WAIT);
    for (const err of failed) {
      expect(shape(err)).toEqual({
        type: 'ApiStatusError',
        code: 403,
        reason: 'Forbidden',
        message: expect.stringMatching(forbidden('delete', pvName)),
        cause: true,
      });
    }
    // The volume was removed from the backend; its PV stays, as the controller may not delete it.
    expect(s.backend.deletes.map((d) => d.pvName)).toContain(pvName);
    expect(await getVolume(s.api, pvName)).toBeDefined();
  });
});
