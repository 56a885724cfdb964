/**
 * `@kprov/provisioner-lib/bundle`, as docs/provisioner-lib.md tells an author to bundle a binary: the guide's example
 * (`examples/hostpath.ts`) built with `binaryBundle`, copied alone into an empty folder with no `node_modules` above
 * it, starts, serves its metrics, provisions a claim and stops on SIGTERM. The library requires client-node's pieces,
 * pino and prom-client's classes when first used; a bundle that did not carry them would fail at the first log line
 * or the first metric. On both tiers.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeTiers } from '@kprov/testkit/vitest';
import { build } from 'tsup';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { binaryBundle } from '../../src/bundle.js';
import { apiOf, createClaim, createClass, waitBound } from '../support/cluster.js';
import { Program } from '../support/program.js';

const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = path.join(PACKAGE, 'examples/hostpath.ts');

/** Where the bundle is built (inside the package, so that its dependencies resolve) and where it runs alone. */
const work = path.join(PACKAGE, '.kprov', `bundle-test-${process.pid}`);
const alone = mkdtempSync(path.join(tmpdir(), 'kprov-bundle-alone-'));

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  // The example as an author writes it, its imports of the library pointed at this package's build.
  const source = readFileSync(EXAMPLE, 'utf8')
    .replace("'@kprov/provisioner-lib/runtime'", JSON.stringify(path.join(PACKAGE, 'dist/runtime.js')))
    .replace("'@kprov/provisioner-lib'", JSON.stringify(path.join(PACKAGE, 'dist/index.js')));
  writeFileSync(path.join(work, 'hostpath.ts'), source);
  await build({
    ...binaryBundle({ hostpath: path.join(work, 'hostpath.ts') }, { outDir: work }),
    config: false,
    silent: true,
  });
  for (const file of ['hostpath.js', 'hostpath.js.LEGAL.txt'])
    copyFileSync(path.join(work, file), path.join(alone, file));
}, 120_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(alone, { recursive: true, force: true });
});

describeTiers('a provisioner bundled with binaryBundle, run from its file alone', (tier) => {
  it('starts, serves its metrics, provisions a claim and exits 0 on SIGTERM', async () => {
    const cluster = await tier.start({ nodes: [] });
    const root = mkdtempSync(path.join(tmpdir(), 'kprov-bundle-root-'));
    tier.defer(() => rmSync(root, { recursive: true, force: true }));
    const kubeconfig = await cluster.writeKubeconfig(path.join(root, 'kubeconfig'));
    const program = new Program(
      path.join(alone, 'hostpath.js'),
      ['--kubeconfig', kubeconfig, '--root', root, '--http-endpoint', '127.0.0.1:0', '--logging-format', 'json'],
      { PATH: process.env.PATH ?? '' },
    );
    tier.defer(() => program.dispose());
    await program.until((p) => p.count('Started provisioner controller') === 1, 'the controller started');
    const url = program.find('Serving metrics and health checks')[0]?.url as string;
    const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('controller_persistentvolumeclaim_provision_total');

    const api = apiOf(cluster);
    await createClass(api, 'bundled', 'example.com/hostpath');
    await createClaim(api, 'claim', 'bundled');
    const bound = await waitBound(api, 'claim');
    expect(bound.spec?.volumeName).toMatch(/^pvc-/);

    program.kill('SIGTERM');
    expect(await program.exited).toEqual({ code: 0, signal: null });
  });
});
