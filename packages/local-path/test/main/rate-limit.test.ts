/**
 * `--kube-api-qps` and `--kube-api-burst` limit every request `main()` makes, driven by a fake rate limit clock:
 * while that clock stands still, exactly `burst` requests reach the API server, whatever the wall clock does.
 */
import { FakeClock } from '@kprov/provisioner-lib/testing';
import type { Testkit } from '@kprov/testkit';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { main } from '../../src/main.js';
import { claim, volumeTestPod, WAIT } from '../provisioner/helpers.js';
import { cleanups, startKit as startBaseKit } from './harness.js';

/** The harness's testkit plus a claim and a pod using it; request counts reset, so only main()'s are counted. */
async function startKit(): Promise<{ kit: Testkit; kubeconfig: string }> {
  const { cluster, core, kubeconfig } = await startBaseKit();
  const kit = cluster.testkit!;
  await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim() });
  await core.createNamespacedPod({ namespace: 'default', body: volumeTestPod() });
  kit.server.resetRequestCounts();
  return { kit, kubeconfig };
}

/** Requests the API server has received since the counts were reset. */
function received(kit: Testkit): number {
  return Object.values(kit.server.requestCounts()).reduce((a, b) => a + b, 0);
}

/** `main()` with a fake rate limit clock; `stop()` stops it and moves that clock until it has exited. */
function run(argv: string[], clock: FakeClock): { stop: () => Promise<number>; messages: () => string[] } {
  const abort = new AbortController();
  let stdout = '';
  let code: number | undefined;
  const exited = main(
    ['start', '--health-port', '0', '--logging-format', 'json', '--leader-election=false', ...argv],
    {},
    {
      stdout: { write: (l: string) => (stdout += l) },
      stderr: { write: (l: string) => (stdout += l) },
      signal: abort.signal,
      handleSignals: false,
      rateLimitClock: clock,
    },
  );
  void exited.then((c) => (code = c));
  const stop = async (): Promise<number> => {
    abort.abort();
    // Requests that cannot be cancelled (watches, writes in flight) still wait for their tokens on the way out.
    return vi.waitFor(async () => {
      await clock.advanceAsync(1000);
      if (code === undefined) throw new Error('main() is still running');
      return code;
    }, WAIT);
  };
  cleanups.push(stop);
  const messages = (): string[] =>
    stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
  return { stop, messages };
}

// Testkit only: it counts the requests the server received, which only the testkit can tell.
describeTiers(
  'main with --kube-api-qps and --kube-api-burst',
  () => {
    it("sends burst requests, then one per 1/qps seconds of the limiter clock, and logs client-go's throttling line", async () => {
      const { kit, kubeconfig } = await startKit();
      const clock = new FakeClock();
      const program = run(['--kubeconfig', kubeconfig, '--kube-api-qps', '1', '--kube-api-burst', '3'], clock);

      // The burst is spent and the next request waits on the clock that only this test moves: nothing else can go.
      await vi.waitFor(async () => {
        expect(received(kit)).toBe(3);
        expect(clock.pending()).toBe(1);
      }, WAIT);
      expect(kit.store.list('persistentvolumes')).toHaveLength(0);

      await clock.advanceAsync(1000);
      await vi.waitFor(async () => {
        expect(received(kit)).toBe(4);
        expect(clock.pending()).toBe(1);
      }, WAIT);

      // One token a second of the limiter clock is enough to start up and provision the claim.
      await vi.waitFor(async () => {
        await clock.advanceAsync(1000);
        expect(kit.store.list('persistentvolumes')).toHaveLength(1);
      }, WAIT);
      expect(program.messages()).toContainEqual(
        expect.stringMatching(
          /^Waited for [\d.]+s due to client-side throttling, not priority and fairness, request: (GET|POST|PUT|PATCH):http:\/\/127\.0\.0\.1:\d+\//,
        ),
      );
      expect(await program.stop()).toBe(0);
    });

    it('limits nothing with a negative --kube-api-qps', async () => {
      const { kit, kubeconfig } = await startKit();
      const clock = new FakeClock();
      const program = run(['--kubeconfig', kubeconfig, '--kube-api-qps', '-1', '--kube-api-burst', '1'], clock);
      await vi.waitFor(async () => expect(kit.store.list('persistentvolumes')).toHaveLength(1), WAIT);
      expect(received(kit)).toBeGreaterThan(1);
      expect(clock.now()).toBe(0);
      expect(clock.pending()).toBe(0);
      expect(program.messages().filter((m) => m.startsWith('Waited for'))).toEqual([]);
      expect(await program.stop()).toBe(0);
    });
  },
  { tiers: ['testkit'] },
);
