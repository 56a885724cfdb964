/**
 * What `pnpm test:busy` runs (docs/testkit.md, "On a busy machine"): the suites whose tests race the machine's clock,
 * where every failure of a loaded run has been. The library's (leases and renew deadlines, watches, retries and
 * backoff, the controller's queue), and the programs' (a binary started, signalled, restarted, taking over a lease or
 * reloading its config): provisioner-lib's, local-path's `test/main` and `test/config`, local-static's and
 * hostpath-example's binaries, and the repository's test of every binary. The behaviour suites drive the same
 * programs through the same waits; they run in `pnpm test`, itself a loaded run (four workers on two cores).
 */
import { configDefaults, defineConfig, type TestProjectInlineConfiguration, type ViteUserConfig } from 'vitest/config';
import hostpathExample from './packages/hostpath-example/vitest.config.ts';
import localPath from './packages/local-path/vitest.config.ts';
import localStatic from './packages/local-static/vitest.config.ts';
import provisionerLib from './packages/provisioner-lib/vitest.config.ts';
import { repo } from './vitest.config.ts';

/**
 * The project of the package in `dir` (its own configuration, `config`), narrowed to `include` less `exclude` (paths
 * under the package). Not vitest's `extends`, which would add `include` to the package's own rather than replace it.
 */
function narrowed(
  dir: string,
  config: ViteUserConfig,
  include: string[],
  exclude: string[] = [],
): TestProjectInlineConfiguration {
  return {
    test: { ...config.test, root: `./packages/${dir}`, include, exclude: [...configDefaults.exclude, ...exclude] },
  };
}

export default defineConfig({
  test: {
    projects: [
      // All of it but the guide's test, which installs packages with npm and has no timing of its own.
      narrowed(
        'provisioner-lib',
        provisionerLib,
        ['test/**/*.test.ts', 'src/**/*.test.ts'],
        ['test/docs/guide.test.ts'],
      ),
      narrowed('local-path', localPath, ['test/main/**/*.test.ts', 'test/config/**/*.test.ts']),
      narrowed('local-static', localStatic, ['test/main.test.ts', 'test/node-cleanup/main.test.ts']),
      narrowed('hostpath-example', hostpathExample, ['test/walkthrough.test.ts', 'test/leader-election.test.ts']),
      { test: { ...repo.test, include: ['test/binaries.test.ts'] } },
    ],
    globalSetup: ['./vitest.global-setup.ts'],
  },
});
