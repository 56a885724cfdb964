/**
 * The Go library's TestInfeasibleRetry (controller_test.go, v13): `syncClaim` is called twice directly, with the
 * class in the controller's cache and a test provisioner that fails with a gRPC error; an infeasible error
 * (InvalidArgument) puts the claim in the slow set, so the second call is delayed without calling the provisioner.
 *
 * How the Go test is adapted:
 * - The controller is started through the harness so that its class cache is filled by its own informer (there is
 *   no way to add to the cache by hand). The claim is deliberately *not* stored in the API server, so the claim
 *   workers never pick it up: the only provision calls are the ones the test makes through `syncClaim`.
 * - Leader election is off and the controller runs on a FakeClock (`clock` option): the slow set measures its
 *   window on that clock. The slow set is private, so instead of Go's `slowSet.Contains`/`slowSet.Remove` the test
 *   observes membership through `syncClaim` (a DelayRetryError without a provision call means "in the slow set")
 *   and ends the window by advancing the fake clock past it (time passing, which is what Go's Remove fakes). No
 *   private field is touched.
 * - A gRPC status error is modelled as `@grpc/grpc-js` reports one: an Error with a numeric `code`.
 */
import type { KubeObject } from '@kprov/testkit';
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { DEFAULTS, type ProvisionControllerOptions } from '../../src/controller/options.js';
import { InfeasibleError } from '../../src/controller/provisioner.js';
import { DelayRetryError } from '../../src/controller/slow-set.js';
import { PROVISIONER, newClaim, newStorageClass, testProvisioner } from './fixtures.js';
import { startHarness, type Harness } from './harness.js';
import { internalsOf } from '../../src/controller/internals.js';

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_INTERNAL = 13;

/** An error shaped like a `@grpc/grpc-js` ServiceError (Go `status.Errorf(code, msg)`). */
function grpcError(code: number, message: string): Error {
  return Object.assign(new Error(`${code} ${message}`), { code, details: message });
}

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const signal = new AbortController().signal;

/** Go `basePVC`; never written to the API server (see above). */
const basePVC = (): V1PersistentVolumeClaim => newClaim('test-claim', 'uid-1-1', 'class-1', PROVISIONER, '');

async function start(
  error: Error,
  options: Partial<ProvisionControllerOptions> = {},
): Promise<{ h: Harness; clock: FakeClock; provisioner: ReturnType<typeof testProvisioner>; cls: V1StorageClass }> {
  const clock = new FakeClock();
  const provisioner = testProvisioner(error);
  const cls = newStorageClass('class-1', PROVISIONER);
  const harness = await startHarness(provisioner, { classes: [cls] }, { leaderElection: false, clock, ...options });
  return { h: harness, clock, provisioner, cls };
}

/** The Warning event the controller records for an infeasible failure (written asynchronously). */
async function expectInfeasibleEvent(harness: Harness): Promise<void> {
  await expect
    .poll(() => harness.kit.store.list('events', 'default').map((e) => String(e.message)), WAIT)
    .toContainEqual(
      expect.stringMatching(/^Volume provisioning failed with infeasible error\. Retries will be delayed\. /),
    );
}

describe('TestInfeasibleRetry', () => {
  it('Should retry non-infeasible error normally', async () => {
    const error = grpcError(GRPC_INTERNAL, 'fake non-infeasible error');
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    // First attempt at provision.
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    // Second attempt: not delayed.
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    expect(s.provisioner.calls).toHaveLength(2);
  });

  it('Should NOT retry infeasible error normally', async () => {
    const error = grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error');
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    // Second attempt: the claim is in the slow set, so it is delayed and the provisioner is not called.
    const second = internalsOf(h.controller).syncClaim(pvc, signal);
    await expect(second).rejects.toBeInstanceOf(DelayRetryError);
    await expect(second).rejects.toThrow(
      'skipping volume provisioning for pvc uid-1-1, because provisioning previously failed with infeasible error',
    );
    expect(s.provisioner.calls).toHaveLength(1);
    await expectInfeasibleEvent(h);
  });

  it('Should EVENTUALLY retry infeasible error', async () => {
    const error = grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error');
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    // Go checks slowSet.Contains here: in the slow set means delayed, without a provision call.
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    // Go removes the UID from the slow set to fake time passing; here time passes: the default window (5 min).
    await s.clock.advanceAsync(DEFAULTS.retryIntervalMaxMs);
    // Second provision attempt.
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    expect(s.provisioner.calls).toHaveLength(2);
  });
});

describe('TestInfeasibleRetry (port additions)', () => {
  it('an InfeasibleError is infeasible too', async () => {
    const error = new InfeasibleError('fake infeasible error');
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    expect(s.provisioner.calls).toHaveLength(1);
  });

  it('a gRPC InvalidArgument in the cause chain is infeasible (Go unwraps the status too)', async () => {
    const error = new Error('CreateVolume failed', {
      cause: grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error'),
    });
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    expect(s.provisioner.calls).toHaveLength(1);
  });

  it('the default window is 5 minutes', async () => {
    const error = grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error');
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    await s.clock.advanceAsync(DEFAULTS.retryIntervalMaxMs - 1);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    await s.clock.advanceAsync(1);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    expect(s.provisioner.calls).toHaveLength(2);
  });

  // A documented fix over Go, where RetryIntervalMax is ignored (the slow set is built before options apply).
  it('retryIntervalMaxMs sets the slow-retry window', async () => {
    const error = grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error');
    const s = await start(error, { retryIntervalMaxMs: 1_000 });
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    await s.clock.advanceAsync(999);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    // 1 s, not the 5 min default: retried.
    await s.clock.advanceAsync(1);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    expect(s.provisioner.calls).toHaveLength(2);
    // The second failure starts a new window of the same length.
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    await s.clock.advanceAsync(1_000);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    expect(s.provisioner.calls).toHaveLength(3);
  });

  it('a window longer than the default is kept too', async () => {
    const error = grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error');
    // A long resync keeps the informers' resync timers out of the advanced span.
    const s = await start(error, { retryIntervalMaxMs: 2 * DEFAULTS.retryIntervalMaxMs, resyncPeriodMs: 60 * 60_000 });
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    await s.clock.advanceAsync(DEFAULTS.retryIntervalMaxMs);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    expect(s.provisioner.calls).toHaveLength(1);
  });

  it('a recreated class (new uid) clears the slow-retry entry', async () => {
    const error = grpcError(GRPC_INVALID_ARGUMENT, 'fake infeasible error');
    const s = await start(error);
    h = s.h;
    const pvc = basePVC();
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    await expect(internalsOf(h.controller).syncClaim(pvc, signal)).rejects.toBeInstanceOf(DelayRetryError);
    h.kit.store.delete('storage.k8s.io/storageclasses', undefined, 'class-1');
    h.kit.store.create(
      'storage.k8s.io/storageclasses',
      newStorageClass('class-1', PROVISIONER) as unknown as KubeObject,
    );
    // Until the informer has seen the new class the call is delayed (or finds no class); then it is retried.
    const harness = h;
    await vi.waitFor(async () => {
      await expect(internalsOf(harness.controller).syncClaim(pvc, signal)).rejects.toBe(error);
    }, WAIT);
    expect(s.provisioner.calls).toHaveLength(2);
  });
});
