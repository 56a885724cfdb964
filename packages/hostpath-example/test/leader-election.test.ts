/**
 * The Lease on a requested stop, through `main()` on both tiers: given up by default (client-go's release: empty
 * holder, `leaseDurationSeconds` 1, transitions kept), so the next replica takes over at once; left to expire with
 * `--no-leader-election-release-on-cancel`; labelled with `--leader-election-labels` while held.
 */
import path from 'node:path';
import { ObjectReader } from '@kprov/testkit';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it } from 'vitest';
import { runMain, tempDir } from './helpers.js';

/**
 * A 20 s lease: without the release, the next replica would wait 20 s. `main()` runs on real time: the long renew
 * deadline keeps a busy machine, whose requests can take seconds, from ending the leadership during a test.
 */
const LONG_LEASE = [
  '--leader-election-lease-duration=20s',
  '--leader-election-renew-deadline=15s',
  '--leader-election-retry-period=100ms',
];

describeTiers('the Lease when kprov-hostpath stops', (tier) => {
  async function start(extra: string[]): Promise<{ read: ObjectReader; program: ReturnType<typeof runMain> }> {
    const cluster = await tier.start({ nodes: [] });
    const files = await tempDir('kprov-hostpath-lease-');
    tier.defer(files.cleanup);
    const kubeconfig = await cluster.writeKubeconfig(path.join(files.dir, 'kubeconfig'));
    const program = runMain(
      [
        '--kubeconfig',
        kubeconfig,
        '--host-root',
        files.dir,
        '--leader-election-namespace',
        'default',
        ...LONG_LEASE,
        ...extra,
      ],
      {
        NODE_NAME: 'node-1',
      },
    );
    tier.defer(() => program.stop());
    await program.started;
    return { read: new ObjectReader(cluster.kubeConfig), program };
  }

  it('is released by default once the controller stopped', async () => {
    const { read, program } = await start([]);
    const [held] = await read.leases('default');
    expect(held?.metadata?.name).toBe('example.com-hostpath');
    expect(held?.spec).toMatchObject({ leaseDurationSeconds: 20, leaseTransitions: 0 });
    expect(held?.spec?.holderIdentity).toMatch(/.+_.+/);

    expect(await program.stop()).toBe(0);
    const [released] = await read.leases('default');
    expect(released?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
  });

  it('is left to expire with --no-leader-election-release-on-cancel', async () => {
    const { read, program } = await start(['--no-leader-election-release-on-cancel']);
    const [held] = await read.leases('default');
    expect(await program.stop()).toBe(0);
    expect((await read.leases('default'))[0]?.spec).toMatchObject({
      holderIdentity: held?.spec?.holderIdentity,
      leaseDurationSeconds: 20,
    });
  });

  it('carries the labels of --leader-election-labels while it leads', async () => {
    const { read } = await start(['--leader-election-labels', 'team:storage,tier:example']);
    const [held] = await read.leases('default');
    expect(held?.metadata?.labels).toMatchObject({ team: 'storage', tier: 'example' });
  });
});
