/**
 * Reloads through `main()` from a mounted ConfigMap directory, as the shipped manifests run the provisioner
 * (`--config /etc/config/config.json`, `CONFIG_MOUNT_PATH=/etc/config/`): a good `config.json` applies to the next
 * claim; a bad one keeps the last good config and says why in the log (no Event: there is no object behind a file);
 * `<CONFIG_MOUNT_PATH>/helperPod.yaml` is re-read on its interval and a broken one keeps the previous template.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { CONFIG_REJECTED_REASON } from '../../src/config/index.js';
import { eventsFor, HELPER_POD_YAML, NAMESPACE, SETUP_SCRIPT, TEARDOWN_SCRIPT, WAIT } from '../provisioner/helpers.js';
import { publishConfigMapVolume } from './configmap-volume.js';
import { provisionOne, runMain, startKit, waitStarted, type Kit } from './harness.js';

function configFor(base: string): string {
  return JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [base] }] });
}

/** The default template with `HELPER_EDITION=<edition>` in the helper container's environment. */
function templateEdition(edition: string): string {
  return `${HELPER_POD_YAML}    env:\n    - name: HELPER_EDITION\n      value: "${edition}"\n`;
}

/** The mounted ConfigMap directory, as the kubelet lays it out. */
async function mount(k: Kit, files: Record<string, string>): Promise<string> {
  const dir = path.join(k.dir, 'etc-config');
  await publishConfigMapVolume(dir, {
    setup: SETUP_SCRIPT,
    teardown: TEARDOWN_SCRIPT,
    'helperPod.yaml': HELPER_POD_YAML,
    ...files,
  });
  return dir;
}

describeTiers('--config <file> reload through main()', () => {
  it('applies a good config.json to the next claim, and keeps the last good one when the next is bad, saying why in the log', async () => {
    const k = await startKit();
    const dir = await mount(k, { 'config.json': configFor('/opt/disk-a') });
    const file = path.join(dir, 'config.json');
    const program = runMain(k.kubeconfig, ['--config', file, '--leader-election=false']);
    await waitStarted(program);
    const root = k.cluster.nodes[0]!.root;

    const first = await provisionOne(k, 'pvc-1');
    expect(first.nodePath).toBe(`/opt/disk-a/${first.pvName}_default_pvc-1`);

    const applied = program.count('Applied config');
    await publishConfigMapVolume(dir, { 'config.json': configFor('/opt/disk-b') });
    await vi.waitFor(async () => expect(program.count('Applied config')).toBe(applied + 1), WAIT);
    const second = await provisionOne(k, 'pvc-2');
    expect(second.nodePath).toBe(`/opt/disk-b/${second.pvName}_default_pvc-2`);
    expect(readFileSync(path.join(root, second.nodePath, 'test'), 'utf8')).toBe('local-path-test\n');

    await publishConfigMapVolume(dir, {
      'config.json': JSON.stringify({ nodePathMap: [{ node: 'node-1', paths: ['/'] }] }),
    });
    const refused = await vi.waitFor(async () => {
      const entry = program
        .entries()
        .find((e) => e.msg === 'failed to load the new config file; keeping the last valid config');
      if (entry === undefined) throw new Error('not refused yet');
      return entry;
    }, WAIT);
    expect(refused.err).toContain("cannot use root ('/') as path on node node-1");
    expect(program.count('Applied config')).toBe(applied + 1);
    const third = await provisionOne(k, 'pvc-3');
    expect(third.nodePath).toBe(`/opt/disk-b/${third.pvName}_default_pvc-3`);
    // The file is the mounted ConfigMap's: the refusal is recorded on that ConfigMap as well.
    const [event] = await vi.waitFor(async () => {
      const found = await eventsFor(k, 'ConfigMap', 'local-path-config', CONFIG_REJECTED_REASON);
      expect(found).toHaveLength(1);
      return found;
    }, WAIT);
    expect(event?.type).toBe('Warning');
    expect(event?.message).toContain("cannot use root ('/') as path on node node-1");

    // Unparsable JSON is refused the same way.
    await publishConfigMapVolume(dir, { 'config.json': '{"nodePathMap": [' });
    await vi.waitFor(async () => {
      const errors = program
        .entries()
        .filter((e) => e.msg === 'failed to load the new config file; keeping the last valid config');
      expect(errors.some((e) => e.err?.startsWith(`fail to load config file ${file}: `))).toBe(true);
    }, WAIT);
    const fourth = await provisionOne(k, 'pvc-4');
    expect(fourth.nodePath).toBe(`/opt/disk-b/${fourth.pvName}_default_pvc-4`);

    program.stop();
    expect(await program.exited).toBe(0);
  });
});

describeTiers('CONFIG_MOUNT_PATH helper pod template reload through main()', () => {
  it('uses an edited <CONFIG_MOUNT_PATH>/helperPod.yaml for the next helper pod, and keeps it when the next edit is broken', async () => {
    const k = await startKit();
    // The setup script (mounted into each helper pod from the ConfigMap) records which template ran it.
    const cm = await k.core.readNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE });
    cm.data = { ...cm.data, setup: `${SETUP_SCRIPT}echo "\${HELPER_EDITION:-none}" > "$VOL_DIR/edition"\n` };
    await k.core.replaceNamespacedConfigMap({ name: 'local-path-config', namespace: NAMESPACE, body: cm });
    const dir = await mount(k, {
      'config.json': configFor('/opt/local-path-provisioner'),
      'helperPod.yaml': templateEdition('1'),
    });
    const program = runMain(
      k.kubeconfig,
      ['--config', path.join(dir, 'config.json'), '--leader-election=false'],
      { CONFIG_MOUNT_PATH: dir },
      { templatePollIntervalMs: 20 },
    );
    await waitStarted(program);
    const root = k.cluster.nodes[0]!.root;
    const edition = (nodePath: string): string => readFileSync(path.join(root, nodePath, 'edition'), 'utf8').trim();
    /** Waits for three more reads of the template, so that at least one began after the last edit. */
    const reread = async (): Promise<void> => {
      const seen =
        program.count('Applied helper pod template') +
        program.count('failed to load the new helper pod manifest; keeping the previous template');
      await vi.waitFor(async () => {
        const now =
          program.count('Applied helper pod template') +
          program.count('failed to load the new helper pod manifest; keeping the previous template');
        expect(now).toBeGreaterThanOrEqual(seen + 3);
      }, WAIT);
    };

    await reread();
    expect(edition((await provisionOne(k, 'pvc-1')).nodePath)).toBe('1');

    await publishConfigMapVolume(dir, {
      'config.json': configFor('/opt/local-path-provisioner'),
      'helperPod.yaml': templateEdition('2'),
    });
    await reread();
    expect(edition((await provisionOne(k, 'pvc-2')).nodePath)).toBe('2');

    // A template the safety checks refuse: logged with the reason, the previous one stays.
    await publishConfigMapVolume(dir, {
      'config.json': configFor('/opt/local-path-provisioner'),
      'helperPod.yaml': templateEdition('3').replace('spec:\n', 'spec:\n  hostNetwork: true\n'),
    });
    await reread();
    const refused = program
      .entries()
      .filter((e) => e.msg === 'failed to load the new helper pod manifest; keeping the previous template');
    expect(refused.at(-1)?.err).toContain(
      'helper pod template must not enable host namespaces unless allow-unsafe-helper-pod-template is enabled',
    );
    expect(edition((await provisionOne(k, 'pvc-3')).nodePath)).toBe('2');
    // Re-read every interval, the same refused file is reported once: one Warning on the ConfigMap.
    await reread();
    const warnings = await eventsFor(k, 'ConfigMap', 'local-path-config', CONFIG_REJECTED_REASON);
    expect(warnings.map((e) => [e.type, e.count ?? 1])).toEqual([['Warning', 1]]);
    expect(warnings[0]?.message).toMatch(
      /^New helperPod\.yaml refused, the previous helper pod template stays in force: .*must not enable host namespaces/,
    );

    program.stop();
    expect(await program.exited).toBe(0);
  });
});
