/**
 * The binary's V8 flags, as a node runs it: in node mode the provisioner runs without V8's JIT (it starts again in its
 * own process with `--jitless`), the cluster-wide provisioner keeps Sparkplug and Maglev, and `KPROV_V8_FLAGS`
 * replaces the flags. A probe loaded before the binary reports, as the process exits, which of V8's compilers are on,
 * whether there is WebAssembly, and its process ID. Without WebAssembly, a kubeconfig with a `proxy-url` (undici)
 * stops node mode with an error that says what to do.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describeTiers } from '@kprov/testkit/vitest';
import { beforeAll, expect, it, vi } from 'vitest';
import { WAIT } from '../provisioner/helpers.js';
import { ensureBuilt, spawnProvisioner } from './binary.js';
import { startKit, type Kit } from './harness.js';

interface Report {
  sparkplug: boolean;
  maglev: boolean;
  turbofan: boolean;
  webAssembly: string;
}

/**
 * Runs the binary with `extra` until it logs `started`, stops it (SIGTERM), and returns the probe's report from the
 * process it was started as.
 */
async function compilersOf(
  k: Kit,
  extra: string[],
  started: string,
  env: Record<string, string> = {},
): Promise<Report> {
  const probe = path.join(k.dir, 'compilers-probe.cjs');
  // `%Is…Enabled()` are V8's own answers (natives syntax, allowed for the probe only).
  writeFileSync(
    probe,
    "process.on('exit', () => process.stderr.write('compilers ' + JSON.stringify({ sparkplug: %IsSparkplugEnabled(), " +
      'maglev: %IsMaglevEnabled(), turbofan: %IsTurbofanEnabled(), webAssembly: typeof WebAssembly, pid: process.pid }) + ' +
      "'\\n'));\n",
  );
  const child = spawnProvisioner(k.kubeconfig, extra, ['--allow-natives-syntax', '--require', probe], env);
  await vi.waitFor(() => expect(child.messages()).toContain(started), WAIT);
  child.process.kill('SIGTERM');
  expect(await child.exited).toBe(0);
  const reports = [...child.output().matchAll(/^compilers (.*)$/gm)].map(
    (m) => JSON.parse(m[1]!) as Report & { pid: number },
  );
  // One process from start to end: the report comes from the process the binary was started as.
  expect(reports, child.output()).toHaveLength(1);
  const { pid, ...compilers } = reports[0]!;
  expect(pid).toBe(child.process.pid);
  return compilers;
}

const nodeMode = (k: Kit): string[] => [
  '--node-mode',
  '--node-name',
  'node-1',
  '--host-root',
  k.cluster.nodes[0]!.root,
];

describeTiers("local-path-provisioner's V8 flags", () => {
  beforeAll(ensureBuilt, 120_000);

  it('in node mode it runs without JIT, in the process it was started as: no compiler, no WebAssembly', async () => {
    const k = await startKit();
    expect(await compilersOf(k, nodeMode(k), 'Provisioner started in node mode on node-1')).toEqual({
      sparkplug: false,
      maglev: false,
      turbofan: false,
      webAssembly: 'undefined',
    });
  });

  it('the cluster-wide provisioner keeps Sparkplug and Maglev (no TurboFan, as every runtime binary)', async () => {
    const k = await startKit();
    expect(await compilersOf(k, [], 'Started provisioner controller')).toEqual({
      sparkplug: true,
      maglev: true,
      turbofan: false,
      webAssembly: 'object',
    });
  });

  it('KPROV_V8_FLAGS replaces them in node mode: empty, every compiler is on', async () => {
    const k = await startKit();
    const report = await compilersOf(k, nodeMode(k), 'Provisioner started in node mode on node-1', {
      KPROV_V8_FLAGS: '',
    });
    expect(report).toEqual({ sparkplug: true, maglev: true, turbofan: true, webAssembly: 'object' });
  });

  it('in node mode a kubeconfig proxy-url, which needs WebAssembly, stops it with what to do', async () => {
    const k = await startKit();
    const kubeconfig = path.join(k.dir, 'proxied.kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: 'https://127.0.0.1:1',
              'proxy-url': 'http://127.0.0.1:1',
              'insecure-skip-tls-verify': true,
            },
          },
        ],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const child = spawnProvisioner(kubeconfig, nodeMode(k));
    expect(await child.exited).toBe(1);
    expect(child.output()).toContain('proxy-url');
    expect(child.output()).toContain('start Node.js without --jitless, or set KPROV_V8_FLAGS');
  });
});
