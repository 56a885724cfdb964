import { writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

const NAME = 'kprov-testkit';

/** A KubeConfig for client-node pointing at the server, with namespace `default`. */
export function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: NAME, server: url, skipTLSVerify: true }],
    users: [{ name: NAME, token: NAME }],
    contexts: [{ name: NAME, cluster: NAME, user: NAME, namespace: 'default' }],
    currentContext: NAME,
  });
  return kc;
}

/** The kubeconfig file text for `url`, as kubectl reads it. */
export function kubeconfigYaml(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${NAME}`,
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain HTTP unless TLS verification is off; kubectl ignores it for http.
    '    insecure-skip-tls-verify: true',
    'users:',
    `- name: ${NAME}`,
    '  user:',
    `    token: ${NAME}`,
    'contexts:',
    `- name: ${NAME}`,
    '  context:',
    `    cluster: ${NAME}`,
    `    user: ${NAME}`,
    '    namespace: default',
    `current-context: ${NAME}`,
    '',
  ].join('\n');
}

/** Writes the kubeconfig for `url` to `path` (creating its folder); returns the path. */
export async function writeKubeconfig(url: string, path: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, kubeconfigYaml(url), { mode: 0o600 });
  return path;
}
