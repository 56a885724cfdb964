/**
 * The getting-started guide of docs/provisioner-lib.md, run as a provisioner author runs it: its commands and files
 * are taken from the page (the fenced blocks of the section marked `sh guide` and `<lang> file=<name>`, so that the
 * page and this test cannot drift) and run in an empty folder, with the packages installed by npm from the tarballs
 * `pnpm pack` makes of the workspace (third-party packages from the npm registry), on the current Node.js and on the
 * oldest supported one. The provisioner it starts runs against the testkit's API server and provisions the guide's
 * claim.
 *
 * What the test changes in the commands, and only that: `@kprov/<name>` in `npm install` lines is the packed
 * tarball (the packages are not published from here), and the endpoint's `:8080` is `127.0.0.1:0` (a free port on a
 * shared machine). `~/.kube/config` is the testkit's kubeconfig, through a `HOME` of the test's own.
 *
 * Needs the packages built (`pnpm build`) and the npm registry. npm's cache is `$KPROV_NPM_CACHE`, else
 * `~/.cache/kprov/npm`, kept between runs.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, loadAllYaml, StorageV1Api, type KubernetesObject, type KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type Testkit } from '@kprov/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const GUIDE_HEADING = '## Getting started: a provisioner binary in an empty folder';
/** npm installs, tsc, and a first start on a busy machine: generous. */
const SETUP_DEADLINE_MS = 480_000;
/** From the claim's creation to its being Bound. */
const CLAIM_DEADLINE_MS = 60_000;
/** From SIGTERM to the provisioner's exit. */
const STOP_DEADLINE_MS = 30_000;

/** One fenced block of the page: its language, the words after it, and its text. */
interface Block {
  lang: string;
  attrs: string[];
  text: string;
}

/** The fenced blocks of the guide's section, in order. */
function guideBlocks(): Block[] {
  const page = readFileSync(join(ROOT, 'docs/provisioner-lib.md'), 'utf8');
  const start = page.indexOf(`\n${GUIDE_HEADING}\n`);
  if (start < 0) throw new Error(`docs/provisioner-lib.md has no "${GUIDE_HEADING}" section`);
  const next = page.indexOf('\n## ', start + GUIDE_HEADING.length + 1);
  const section = page.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/^```(\S*)([^\n]*)\n([\s\S]*?)^```[ \t]*$/gm)].map((m) => ({
    lang: m[1]!,
    attrs: m[2]!.trim().split(/\s+/).filter(Boolean),
    text: m[3]!,
  }));
}

const fileOf = (b: Block): string | undefined => b.attrs.find((a) => a.startsWith('file='))?.slice('file='.length);

interface Workspace {
  name: string;
  folder: string;
  dependencies: Record<string, string>;
}

const workspace: Workspace[] = readdirSync(join(ROOT, 'packages')).map((dir) => {
  const json = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
  };
  return { name: json.name, folder: join(ROOT, 'packages', dir), dependencies: json.dependencies ?? {} };
});

/** `names` and the workspace packages they depend on, transitively. */
function withWorkspaceDependencies(names: Iterable<string>): Workspace[] {
  const found = new Map<string, Workspace>();
  const visit = (name: string): void => {
    if (found.has(name)) return;
    const pkg = workspace.find((p) => p.name === name);
    if (pkg === undefined) throw new Error(`the guide installs ${name}, which is not a package of this workspace`);
    found.set(name, pkg);
    for (const [dep, range] of Object.entries(pkg.dependencies)) if (range.startsWith('workspace:')) visit(dep);
  };
  for (const name of names) visit(name);
  return [...found.values()];
}

/** The oldest supported Node.js, where .ci/run installs it; undefined when it is not there. */
function oldestNode(): { version: string; path: string | undefined } {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const version = /^>=(\d+\.\d+\.\d+)$/.exec(root.engines.node)?.[1];
  if (version === undefined) throw new Error(`root engines.node "${root.engines.node}" is not ">=X.Y.Z"`);
  const tools = process.env.KPROV_TOOLS ?? join(homedir(), '.kprov-tools');
  const path = join(tools, `node-${version}`, 'bin', 'node');
  return { version, path: existsSync(path) ? path : undefined };
}

const blocks = guideBlocks();
const oldest = oldestNode();
const nodes = [{ label: `Node.js ${process.versions.node} (the test's)`, path: process.execPath }];
if (oldest.path !== undefined && oldest.version !== process.versions.node)
  nodes.push({ label: `Node.js ${oldest.version} (the oldest supported)`, path: oldest.path });
if (oldest.path === undefined) {
  process.stdout.write(
    `provisioner-lib guide: Node.js ${oldest.version} skipped, not found; install it as .ci/run does: npm install --global --prefix ~/.kprov-tools/node-${oldest.version} node@${oldest.version}\n`,
  );
}

describe('the guide of docs/provisioner-lib.md', () => {
  it("has the package's example as its provisioner, and the tarball ships it", () => {
    const example = blocks.find((b) => fileOf(b) === 'hostpath.ts');
    expect(example?.text).toBe(readFileSync(join(ROOT, 'packages/provisioner-lib/examples/hostpath.ts'), 'utf8'));
    const json = JSON.parse(readFileSync(join(ROOT, 'packages/provisioner-lib/package.json'), 'utf8')) as {
      files: string[];
    };
    expect(json.files).toContain('examples');
  });
});

describe.each(nodes)('the guide of docs/provisioner-lib.md, verbatim from an empty folder, on $label', (node) => {
  let dir: string;
  let kit: Testkit;
  let tarballs: Map<string, string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kprov-guide-'));
    mkdirSync(join(dir, 'packs'));
    const installed = blocks
      .filter((b) => b.lang === 'sh' && b.attrs.includes('guide'))
      .flatMap((b) => [...b.text.matchAll(/^npm install (.*)$/gm)].flatMap((m) => m[1]!.split(/\s+/)))
      .filter((arg) => arg.startsWith('@kprov/'));
    tarballs = new Map();
    for (const pkg of withWorkspaceDependencies(installed)) {
      const out = execFileSync('pnpm', ['pack', '--pack-destination', join(dir, 'packs')], {
        cwd: pkg.folder,
        encoding: 'utf8',
      });
      tarballs.set(pkg.name, out.trim().split('\n').at(-1)!);
    }
    kit = await startApiServer({ nodes: [], scheduler: false, kubelet: false });
    mkdirSync(join(dir, 'home', '.kube'), { recursive: true });
    await kit.writeKubeconfig(join(dir, 'home', '.kube', 'config'));
  }, 120_000);

  afterAll(async () => {
    await kit?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'installs, type-checks and runs the example, which provisions the claim and stops on SIGTERM',
    async () => {
      const entries = execFileSync('tar', ['-tzf', tarballs.get('@kprov/provisioner-lib')!], { encoding: 'utf8' });
      expect(entries.split('\n')).toContain('package/examples/hostpath.ts');

      // The script: the guide's commands and files in order, up to its last command (the provisioner, which runs
      // until stopped); the files after it are the cluster's (applied below, as kubectl would).
      const lastCommand = blocks.findLastIndex((b) => b.lang === 'sh' && b.attrs.includes('guide'));
      expect(lastCommand).toBeGreaterThan(0);
      const lines = ['set -euo pipefail'];
      for (const block of blocks.slice(0, lastCommand + 1)) {
        const file = fileOf(block);
        if (file !== undefined) {
          lines.push(`cat > '${file}' <<'KPROV_GUIDE_EOF'`, block.text.trimEnd(), 'KPROV_GUIDE_EOF');
        } else if (block.lang === 'sh' && block.attrs.includes('guide')) {
          lines.push(
            block.text.replace(/^npm install .*$/gm, (line) =>
              line.replace(/@kprov\/[\w-]+/g, (name) => tarballs.get(name) ?? name),
            ),
          );
        }
      }
      const runLine = lines.at(-1)!;
      expect(runLine).toContain('--http-endpoint :8080');
      lines[lines.length - 1] = runLine.replace('--http-endpoint :8080', '--http-endpoint 127.0.0.1:0');

      const program = startScript(lines.join('\n'), node.path, dir);
      try {
        const url = await program.waitFor(
          /Serving metrics and health checks"? url="?(http:\/\/[^"\s]+)/,
          'the provisioner to serve its endpoint',
          SETUP_DEADLINE_MS,
        );
        expect(program.output()).toContain('Usage of example-hostpath:'); // the guide's --help
        expect(program.output()).toContain('  -root string');

        const claimFile = blocks.find((b) => fileOf(b) === 'claim.yaml');
        expect(claimFile).toBeDefined();
        await apply(kit.kubeConfig, claimFile!.text);
        const core = kit.kubeConfig.makeApiClient(CoreV1Api);
        const claim = await vi.waitFor(
          async () => {
            const c = await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'hostpath-claim' });
            expect(c.status?.phase).toBe('Bound');
            return c;
          },
          { timeout: CLAIM_DEADLINE_MS, interval: 100 },
        );
        const volume = await core.readPersistentVolume({ name: claim.spec!.volumeName! });
        const path = volume.spec?.hostPath?.path ?? '';
        expect(path).toMatch(/\/hostpath-provisioner\/volumes\/pvc-[0-9a-f-]+$/);
        expect(existsSync(path)).toBe(true);
        const metrics = await (await fetch(`${url}/metrics`)).text();
        expect(metrics).toMatch(
          /^controller_persistentvolumeclaim_provision_total\{class="example-hostpath"[^}]*\} 1$/m,
        );

        program.kill('SIGTERM');
        await program.closed(STOP_DEADLINE_MS);
        expect(program.output()).toMatch(/"Stopped"/);
      } catch (err) {
        throw new Error(`${String(err)}\n--- the guide's output:\n${program.output()}`, { cause: err });
      } finally {
        program.kill('SIGKILL');
      }
    },
    SETUP_DEADLINE_MS + CLAIM_DEADLINE_MS + STOP_DEADLINE_MS + 30_000,
  );
});

/** Creates the objects of a YAML file as `kubectl apply -f` does for new objects. */
async function apply(kubeConfig: KubeConfig, yaml: string): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const storage = kubeConfig.makeApiClient(StorageV1Api);
  for (const object of loadAllYaml(yaml) as KubernetesObject[]) {
    if (object.kind === 'StorageClass') await storage.createStorageClass({ body: object as never });
    else if (object.kind === 'PersistentVolumeClaim')
      await core.createNamespacedPersistentVolumeClaim({
        namespace: object.metadata?.namespace ?? 'default',
        body: object,
      });
    else
      throw new Error(
        `the guide's claim.yaml has a ${object.kind ?? 'kindless'} object, which this test does not apply`,
      );
  }
}

/** The guide's script running in bash, in its own process group (so that SIGTERM reaches the provisioner too). */
interface Script {
  output: () => string;
  waitFor: (pattern: RegExp, what: string, timeoutMs: number) => Promise<string>;
  kill: (signal: NodeJS.Signals) => void;
  closed: (timeoutMs: number) => Promise<void>;
}

function startScript(script: string, node: string, dir: string): Script {
  const env: Record<string, string> = {
    PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
    HOME: join(dir, 'home'),
    npm_config_cache: process.env.KPROV_NPM_CACHE ?? join(homedir(), '.cache', 'kprov', 'npm'),
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  // How this machine reaches the registry: its proxy and certificate authorities.
  for (const key of [
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'NO_PROXY',
    'http_proxy',
    'https_proxy',
    'no_proxy',
    'NODE_EXTRA_CA_CERTS',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
  ])
    if (process.env[key] !== undefined) env[key] = process.env[key];
  const child: ChildProcess = spawn('bash', ['-c', script], {
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  const close = new Promise<void>((resolve) => child.on('close', () => resolve()));
  void close.then(() => (exited = true));
  return {
    output: () => output,
    async waitFor(pattern, what, timeoutMs) {
      const match = (): string | undefined => {
        const m = pattern.exec(output);
        return m === null ? undefined : (m[1] ?? m[0]);
      };
      const found = vi.waitFor(
        () => {
          const m = match();
          if (m === undefined) throw new Error(`timed out waiting for ${what}`);
          return m;
        },
        { timeout: timeoutMs, interval: 200 },
      );
      const ended = close.then(() => {
        const m = match();
        if (m !== undefined) return m;
        throw new Error(`the guide's commands ended (exit code ${String(child.exitCode)}) before ${what}`);
      });
      return Promise.race([found, ended]);
    },
    kill(signal) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    },
    async closed(timeoutMs) {
      await vi.waitFor(() => expect(exited).toBe(true), { timeout: timeoutMs, interval: 100 });
    },
  };
}
