/**
 * Leader takeover through `main()`: two replicas; when the leader stops, the other acquires the Lease (its holder
 * changes) and provisions the next claim. A stopped leader releases the Lease by default
 * (`--leader-election-release-on-cancel`), so the other replica takes over at once even with a long lease.
 *
 * `main()` runs on real time, as users run it. The renew deadlines are long so that a busy machine, whose requests
 * can take seconds, never ends a leadership in the middle of a test; the short retry period keeps takeovers quick.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { NAMESPACE, WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, startKit, waitStarted, type Program } from './harness.js';

/** A 20 s lease, renewed every 100 ms: without a release, a takeover would take 20 s (about 100 attempts). */
const LONG_LEASE = [
  '--leader-election-lease-duration',
  '20s',
  '--leader-election-renew-deadline',
  '15s',
  '--leader-election-retry-period',
  '100ms',
];

function creating(program: Program, pvName: string): string[] {
  return program.messages().filter((m) => m.startsWith(`Creating volume ${pvName} `));
}

describeTiers('leader takeover through main()', () => {
  it('hands the Lease to the other replica when the leader stops, and that one provisions the next claim', async () => {
    const k = await startKit();
    const holder = async (): Promise<string | undefined> => {
      const [lease] = await k.read.leases(NAMESPACE);
      return lease?.spec?.holderIdentity;
    };
    const a = runMain(k.kubeconfig, LONG_LEASE);
    await waitStarted(a);
    const first = await holder();
    expect(first).toBeDefined();
    const b = runMain(k.kubeconfig, LONG_LEASE);
    // b runs, sees a's Lease, and waits.
    await vi.waitFor(async () => expect(b.messages()).toContain('Provisioner started'), WAIT);

    const one = await provisionOne(k, 'pvc-1');
    expect(creating(a, one.pvName)).toHaveLength(1);
    expect(creating(b, one.pvName)).toEqual([]);
    expect(b.started()).toBeUndefined();
    expect(await holder()).toBe(first);

    a.stop();
    expect(await a.exited).toBe(0);
    await waitStarted(b);
    await vi.waitFor(async () => {
      const now = await holder();
      expect(now).toBeDefined();
      expect(now).not.toBe(first);
    }, WAIT);

    const two = await provisionOne(k, 'pvc-2');
    expect(creating(b, two.pvName)).toHaveLength(1);
    expect(creating(a, two.pvName)).toEqual([]);
    expect(await k.read.volumes()).toHaveLength(2);

    b.stop();
    expect(await b.exited).toBe(0);
  });
  it('by default a stopped leader releases the Lease: the other replica takes it at its next attempt', async () => {
    const k = await startKit();
    const lease = async (): Promise<{ holder: string | undefined; durationSeconds: number | undefined }> => {
      const [l] = await k.read.leases(NAMESPACE);
      return { holder: l?.spec?.holderIdentity, durationSeconds: l?.spec?.leaseDurationSeconds };
    };
    const a = runMain(k.kubeconfig, LONG_LEASE);
    await waitStarted(a);
    const first = (await lease()).holder;
    const b = runMain(k.kubeconfig, LONG_LEASE);
    // b is a standby: its attempts to acquire fail while a renews.
    await vi.waitFor(() => expect(b.count('Failed to acquire lease')).toBeGreaterThanOrEqual(3), WAIT);

    a.stop();
    expect(await a.exited).toBe(0);
    const attemptsAtExit = b.count('Failed to acquire lease');
    // Released before a exited (or already taken by b): not a's any more.
    expect((await lease()).holder).not.toBe(first);
    await waitStarted(b);
    // One attempt may have read the Lease before the release; the next one takes it.
    expect(b.count('Failed to acquire lease') - attemptsAtExit).toBeLessThanOrEqual(1);
    const taken = await lease();
    expect(taken.holder).toBeDefined();
    expect(taken.holder).not.toBe(first);
    expect(taken.durationSeconds).toBe(20);
  });

  it('a restarted provisioner, with the default timings, leads at its first attempt and provisions at once', async () => {
    const k = await startKit();
    const a = runMain(k.kubeconfig);
    await waitStarted(a);
    const first = await provisionOne(k, 'pvc-before');
    expect(creating(a, first.pvName)).toHaveLength(1);
    // A restart, as a rolling update does it: the old process stops (SIGTERM), then the new one starts.
    a.stop();
    expect(await a.exited).toBe(0);
    const b = runMain(k.kubeconfig);
    await waitStarted(b);
    // Without the release it would fail every 2 s until the 15 s lease ran out.
    expect(b.count('Failed to acquire lease')).toBe(0);
    const next = await provisionOne(k, 'pvc-after');
    expect(creating(b, next.pvName)).toHaveLength(1);
  });

  it('with --leader-election-release-on-cancel=false a stopped leader leaves the Lease to expire', async () => {
    const k = await startKit();
    const holder = async (): Promise<string | undefined> => (await k.read.leases(NAMESPACE))[0]?.spec?.holderIdentity;
    const a = runMain(k.kubeconfig, [...LONG_LEASE, '--leader-election-release-on-cancel=false']);
    await waitStarted(a);
    const first = await holder();
    a.stop();
    expect(await a.exited).toBe(0);
    expect(await holder()).toBe(first);
  });
});
