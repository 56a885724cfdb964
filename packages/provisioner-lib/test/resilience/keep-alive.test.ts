/**
 * A provisioner program whose only work is `await controller.run(signal)` (program/run-controller.mjs, on the built
 * library, as a child process with no HTTP listener) stays alive in every state of the run: as a standby waiting for
 * the Lease, retrying while the API server is down, and as a leader whose watches back off; and it exits on its own
 * once the run settled, after SIGTERM (code 0) or after losing leadership (code 3), so no handle outlives the run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster } from '@kprov/testkit';
import type { KubeConfig } from '@kubernetes/client-node';
import { describeTiers, WAIT } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { LeaderElector } from '../../src/leaderelection/elector.js';
import { LeaseLock } from '../../src/leaderelection/lease-lock.js';
import { Program } from '../support/program.js';

const PROVISIONER = 'example.com/keep-alive';
const LEASE = 'example.com-keep-alive';
const PROGRAM = fileURLToPath(new URL('./program/run-controller.mjs', import.meta.url));
/**
 * Timings for the standby test, on real time (the program is a process of its own): a 200 ms retry period for quick
 * attempts, and a renew deadline a busy machine does not miss, so that a leader leads until the test stops it.
 */
const STANDBY = { leaseDurationMs: 10_000, renewDeadlineMs: 8_000, retryPeriodMs: 200 };

/** Another replica, in this process: an elector holding the provisioner's Lease. */
function holdLease(kubeConfig: KubeConfig, identity: string): { elector: LeaderElector; stop: () => Promise<void> } {
  const lock = new LeaseLock({ kubeConfig, namespace: 'default', name: LEASE, identity });
  const elector = new LeaderElector({
    lock,
    ...STANDBY,
    onStartedLeading: () => undefined,
    onStoppedLeading: () => undefined,
  });
  const abort = new AbortController();
  const running = elector.run(abort.signal);
  let stopped: Promise<void> | undefined;
  return {
    elector,
    stop: () =>
      (stopped ??= (async () => {
        abort.abort();
        await running;
        await lock.close();
      })()),
  };
}

/** Log lines of a watch that ended or failed and is started again (after a back-off when it failed). */
function watchRestarts(p: Program): number {
  return p.lines.filter((l) => l.msg === 'Restarting watch' || l.msg === 'Relisting').length;
}

describeTiers('a program whose only work is await controller.run(signal)', (tier) => {
  async function setUp(): Promise<{ cluster: Cluster; start: (options: Record<string, unknown>) => Program }> {
    const dir = await mkdtemp(join(tmpdir(), 'kprov-keep-alive-'));
    tier.defer(() => rm(dir, { recursive: true, force: true }));
    const cluster = await tier.start({ nodes: [], testkit: { scheduler: false, kubelet: false } });
    const kubeconfig = await cluster.writeKubeconfig(join(dir, 'kubeconfig'));
    return {
      cluster,
      start: (options) => {
        const program = new Program(PROGRAM, [
          JSON.stringify({ kubeconfig, provisionerName: PROVISIONER, ...options }),
        ]);
        tier.defer(() => program.dispose());
        return program;
      },
    };
  }

  it('stays alive as a standby and while the API server is down, and exits 0 on its own after SIGTERM', async () => {
    const { cluster: c, start } = await setUp();
    const holder = holdLease(c.kubeConfig, 'holder');
    tier.defer(() => holder.stop());
    await vi.waitFor(() => expect(holder.elector.isLeader()).toBe(true), WAIT);

    const program = start({ identity: 'standby', ...STANDBY });
    // Standby: it saw the holder and keeps trying, one Lease GET per attempt (sleeping a retry period between).
    await program.until((p) => p.find('newLeader').some((l) => l.identity === 'holder'), 'the standby sees the holder');
    const standing = program.count('Failed to acquire lease');
    await program.until(
      (p) => p.count('Failed to acquire lease') >= standing + 10,
      '10 more attempts to acquire as a standby',
    );
    expect(program.count('startedLeading')).toBe(0);

    // The holder goes away without releasing the Lease, and so does the API server: every attempt fails to read it.
    await holder.stop();
    await c.stopApiServer();
    const down = program.count('Error retrieving lease');
    await program.until(
      (p) => p.count('Error retrieving lease') >= down + 5,
      '5 failed attempts while the API server is down',
    );
    await c.startApiServer();

    // Once the holder's 10 s ran out, the program takes over and runs its informers.
    await program.until((p) => p.count('started') === 1, 'the program leads and has synced its informers');
    program.kill('SIGTERM');
    expect(await program.exited).toEqual({ code: 0, signal: null });
    expect(program.count('runResolved')).toBe(1);
  });

  it('stays alive as a leader while its watches back off, and exits on its own when leadership is lost', async () => {
    const { cluster: c, start } = await setUp();
    // A renew deadline well beyond a few watch back-offs (800 ms, then 1.6 s...), even on a busy machine where a real
    // API server's connections take a while to fail and the program's turns come late.
    const program = start({ identity: 'leader', leaseDurationMs: 25_000, renewDeadlineMs: 20_000, retryPeriodMs: 500 });
    await program.until((p) => p.count('started') === 1, 'the program leads and has synced its informers');

    await c.stopApiServer();
    const restarts = watchRestarts(program);
    // Claims, volumes and classes: each watch fails and is restarted after a back-off, twice.
    await program.until(
      (p) => watchRestarts(p) >= restarts + 6,
      'the watches restart after back-offs while the API server is down',
    );
    expect(program.count('stoppedLeading')).toBe(0);

    // Renewals keep failing: leadership ends after the renew deadline, run rejects, and nothing else holds the process.
    expect(await program.exited).toEqual({ code: 3, signal: null });
    expect(program.find('runRejected')).toEqual([{ event: 'runRejected', name: 'LeaderElectionLostError' }]);
  });
});
