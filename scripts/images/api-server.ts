// The API server the images are started against: the testkit's (`kprov-testkit serve`), with one simulated node.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { NotMeasurable, type Manifest } from './manifest.ts';
import { REPO } from './paths.ts';

const CLI = join(REPO, 'packages/testkit/dist/cli.js');
export const NODE_NAME = 'node-1';

export interface ApiServer {
  /** The kubeconfig the server wrote (its address and token). */
  kubeconfig: string;
  /**
   * Creates the objects of the kinds the provisioners read (namespaces first); one that exists is fine. Others (RBAC:
   * the kubeconfig is an administrator's) are left out.
   */
  create(objects: Manifest[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the server with its files in `dir`; resolves once the kubeconfig is written. */
export async function startApiServer(dir: string): Promise<ApiServer> {
  if (!existsSync(CLI)) throw new NotMeasurable(`${CLI} is missing: run pnpm build first`);
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--kubeconfig-out', kubeconfig, '--node', `${NODE_NAME}=${join(dir, NODE_NAME)}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (b: Buffer): void => {
      output += b.toString();
      // The server prints the kubeconfig's path once it has written it.
      if (output.includes('kubeconfig:')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new NotMeasurable(`the testkit's API server exited (${code}): ${output}`)));
  });
  await ready;

  const config = await readFile(kubeconfig, 'utf8');
  const server = /server: (\S+)/.exec(config)?.[1];
  const token = /token: (\S+)/.exec(config)?.[1];
  if (server === undefined || token === undefined) throw new NotMeasurable(`${kubeconfig} has no server or token`);

  return {
    kubeconfig,
    async create(objects) {
      const ordered = [...objects].sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
      for (const object of ordered) {
        const path = resourcePath(object);
        if (path === undefined) continue;
        const res = await fetch(`${server}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(object),
        });
        if (!res.ok && res.status !== 409) {
          const what = `${object.kind} ${object.metadata?.name}`;
          throw new NotMeasurable(`creating ${what}: HTTP ${res.status} ${await res.text()}`);
        }
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The collection an object is created in, for the kinds the provisioners read. */
function resourcePath(object: Manifest): string | undefined {
  const namespace = object.metadata?.namespace ?? 'default';
  const paths: Record<string, string> = {
    Namespace: '/api/v1/namespaces',
    ConfigMap: `/api/v1/namespaces/${namespace}/configmaps`,
    ServiceAccount: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    StorageClass: '/apis/storage.k8s.io/v1/storageclasses',
  };
  return object.kind === undefined ? undefined : paths[object.kind];
}
