/** How to reach the current cluster of a KubeConfig: TLS material and proxy, read as client-node reads them. */
import { readFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The part of client-node's `KubeConfig` a connection is made from: its current context, cluster and user.
 */
export type KubeConfigView = Pick<KubeConfig, 'getCurrentCluster' | 'getCurrentUser' | 'getCurrentContext'>;

/** TLS options of a connection: what client-node's `applyHTTPSOptions` sets. */
export interface TlsOptions {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
}

/** How to connect: straight (`secure`: over TLS), through an HTTP(S) proxy, or a SOCKS proxy. */
export type ConnectionOptions =
  | { type: 'direct'; secure: boolean; tls: TlsOptions }
  | { type: 'proxy'; uri: string; tls: TlsOptions }
  | { type: 'socks'; uri: string };

/** client-node's `bufferFromFileOrString`: the file's bytes, else the base64 data, else null. */
function bufferFromFileOrString(file: string | undefined, data: string | undefined): Buffer | null {
  if (file !== undefined && file !== '') return readFileSync(file);
  if (data !== undefined && data !== '') return Buffer.from(data, 'base64');
  return null;
}

/**
 * The TLS material of the current cluster and user, read as client-node's `applyHTTPSOptions` reads it:
 * `skipTLSVerify` → `rejectUnauthorized: false`, `tlsServerName` → `servername`, CA from `caFile`/`caData`, client
 * certificate and key from `certFile`/`certData` and `keyFile`/`keyData`; nothing without a user, as client-node.
 */
export function tlsOptions(kc: KubeConfigView): TlsOptions {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const options: TlsOptions = {};
  if (user === null) return options;
  if (cluster?.skipTLSVerify === true) options.rejectUnauthorized = false;
  if (cluster?.tlsServerName !== undefined && cluster.tlsServerName !== '') options.servername = cluster.tlsServerName;
  const ca = cluster === null ? null : bufferFromFileOrString(cluster.caFile, cluster.caData);
  if (ca !== null) options.ca = ca;
  const cert = bufferFromFileOrString(user.certFile, user.certData);
  if (cert !== null) options.cert = cert;
  const key = bufferFromFileOrString(user.keyFile, user.keyData);
  if (key !== null) options.key = key;
  return options;
}

/**
 * How to connect to the current cluster, with client-node's rules (its `createDispatcherOptions`): a `proxy-url`
 * starting with `socks` is a SOCKS proxy, any other an HTTP(S) proxy; plain HTTP needs `skipTLSVerify`. Files are
 * read now.
 *
 * @throws Error for plain HTTP without `skipTLSVerify`, as client-node.
 */
export function connectionOptions(kc: KubeConfigView): ConnectionOptions {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the KubeConfig has no current cluster');
  const proxy = cluster.proxyUrl;
  if (proxy !== undefined && proxy !== '') {
    if (proxy.startsWith('socks')) return { type: 'socks', uri: proxy };
    return { type: 'proxy', uri: proxy, tls: tlsOptions(kc) };
  }
  if (cluster.server.startsWith('http:') && cluster.skipTLSVerify !== true)
    throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
  return { type: 'direct', secure: !cluster.server.startsWith('http:'), tls: tlsOptions(kc) };
}
