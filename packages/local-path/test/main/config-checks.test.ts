/**
 * Configs that cannot provision anything are refused through `main()`, as bad JSON is: the last good config stays,
 * an `InvalidConfig` Warning is recorded on the ConfigMap, and "Applied config" is not logged. Unknown keys are
 * warned about; a `nodePathMap` node missing from the cluster is allowed but warned about once.
 */
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { CONFIG_REJECTED_REASON } from '../../src/config/index.js';
import { BASE_PATH, eventsFor, NAMESPACE, WAIT } from '../provisioner/helpers.js';
import { provisionOne, runMain, startKit, waitStarted, type Kit, type Program } from './harness.js';

const DEFAULT_ENTRY = { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [BASE_PATH] };
const REFUSED = 'failed to load the new config file; keeping the last valid config';

async function setConfig(k: Kit, text: string): Promise<void> {
  const cm = await k.core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
  cm.data = { ...cm.data, 'config.json': text };
  await k.core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
}

function refusals(program: Program): string[] {
  return program
    .entries()
    .filter((e) => e.msg === REFUSED)
    .map((e) => e.err ?? '');
}

describeTiers('config checks through main()', () => {
  it.each([
    [
      'a misspelt nodePathMap (no node map at all)',
      { nodePathMapp: [DEFAULT_ENTRY] },
      'unknown keys, ignored: nodePathMapp',
    ],
    [
      'both nodePathMap and sharedFileSystemPath',
      { nodePathMap: [DEFAULT_ENTRY], sharedFileSystemPath: '/mnt/nfs' },
      'both nodePathMap and sharedFileSystemPath are defined',
    ],
    ['an empty nodePathMap', { nodePathMap: [] }, 'both nodePathMap and sharedFileSystemPath are unconfigured'],
    [
      'a nodePathMap in which no node has a path',
      { nodePathMap: [{ node: 'node-1', paths: [] }] },
      'no node in nodePathMap has a path',
    ],
  ])('refuses %s: the last good config stays, with an InvalidConfig Warning', async (_what, bad, words) => {
    const k = await startKit();
    const program = runMain(k.kubeconfig, ['--leader-election=false']);
    await waitStarted(program);
    const applied = program.count('Applied config');

    await setConfig(k, JSON.stringify(bad));
    await vi.waitFor(() => expect(refusals(program)).toHaveLength(1), WAIT);
    expect(refusals(program)[0]).toContain(words);
    const [event] = await vi.waitFor(async () => {
      const found = await eventsFor(k, 'ConfigMap', 'local-path-config', CONFIG_REJECTED_REASON);
      expect(found).toHaveLength(1);
      return found;
    }, WAIT);
    expect(event?.type).toBe('Warning');
    expect(event?.message).toContain(words);
    expect(program.count('Applied config')).toBe(applied);
    // The last good config still provisions.
    const one = await provisionOne(k, 'pvc-1');
    expect(one.nodePath).toBe(`${BASE_PATH}/${one.pvName}_default_pvc-1`);
  });

  it('refuses such a config at start-up', async () => {
    const k = await startKit();
    await setConfig(k, JSON.stringify({ nodePathMapp: [DEFAULT_ENTRY] }));
    const program = runMain(k.kubeconfig, ['--leader-election=false']);
    expect(await program.exited).toBe(1);
    expect(program.messages().find((m) => m.startsWith('Error starting daemon:'))).toContain(
      'both nodePathMap and sharedFileSystemPath are unconfigured',
    );
  });

  it('warns about unknown keys, and once about a nodePathMap node that is not in the cluster', async () => {
    const k = await startKit();
    await setConfig(
      k,
      JSON.stringify({ nodePathMap: [DEFAULT_ENTRY, { node: 'ghost', paths: ['/ghost'] }], cmdTimeoutSecond: 30 }),
    );
    const program = runMain(k.kubeconfig, ['--leader-election=false']);
    await waitStarted(program);
    const ghost = (): string[] => program.messages().filter((m) => m.startsWith('nodePathMap lists node ghost'));
    await vi.waitFor(() => expect(ghost()).toHaveLength(1), WAIT);
    expect(program.messages()).toContain('unknown key cmdTimeoutSecond in config.json, ignored; check its spelling');

    // Another config naming the same missing node: not warned again.
    await setConfig(
      k,
      JSON.stringify({ nodePathMap: [DEFAULT_ENTRY, { node: 'ghost', paths: ['/ghost', '/ghost2'] }] }),
    );
    await vi.waitFor(() => expect(program.count('Applied config')).toBe(2), WAIT);
    await new Promise((r) => setTimeout(r, 300));
    expect(ghost()).toHaveLength(1);
    expect(program.messages().filter((m) => m.startsWith('nodePathMap lists node node-1'))).toEqual([]);
  });
});
