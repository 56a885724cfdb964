/**
 * Leader takeover through `main()`: two replicas with short Lease timings; when the leader stops, the other acquires
 * the Lease (its holder changes) and provisions the next claim.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { NAMESPACE, WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, startKit, waitStarted, type Program } from './harness.js';

const SHORT_LEASE = ['--leader-election-lease-duration', '1s', '--leader-election-renew-deadline', '600ms', '--leader-election-retry-period', '100ms'];

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
    const a = runMain(k.kubeconfig, SHORT_LEASE);
    await waitStarted(a);
    const first = await holder();
    expect(first).toBeDefined();
    const b = runMain(k.kubeconfig, SHORT_LEASE);
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
});
