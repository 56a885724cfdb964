/** The printers of Node, Namespace, ConfigMap, Secret, ServiceAccount and Lease. */

import type { KubeObject } from '../../api/objects.js';
import { AGE_COLUMN, NAME_COLUMN, age, arr, column, keyCount, rec, str } from './common.js';
import type { Printer } from './types.js';

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';
const NODE_ROLE_LABEL = 'kubernetes.io/role';

/** Roles from `node-role.kubernetes.io/<role>` label keys and the `kubernetes.io/role` label value, sorted. */
function nodeRoles(node: KubeObject): string[] {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith(NODE_ROLE_PREFIX) && key.length > NODE_ROLE_PREFIX.length)
      roles.add(key.slice(NODE_ROLE_PREFIX.length));
    else if (key === NODE_ROLE_LABEL && value !== '') roles.add(value);
  }
  return [...roles].sort();
}

/** `Ready` / `NotReady` from the Ready condition (`Unknown` without one), plus `SchedulingDisabled` when cordoned. */
function nodeStatus(node: KubeObject): string {
  const ready = arr(rec(node.status).conditions)
    .map(rec)
    .filter((c) => c.type === 'Ready')
    .at(-1);
  const parts = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (rec(node.spec).unschedulable === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

/** The first address of a type from `status.addresses`, or `<none>`. */
function nodeAddress(node: KubeObject, type: string): string {
  const address = arr(rec(node.status).addresses)
    .map(rec)
    .find((a) => a.type === type);
  return address === undefined ? '<none>' : str(address.address);
}

/** Nodes: NAME, STATUS, ROLES, AGE, VERSION; wide INTERNAL-IP, EXTERNAL-IP, OS-IMAGE, KERNEL-VERSION, CONTAINER-RUNTIME. */
export const NODE_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The status of the node'),
    column('Roles', 'string', 'The roles of the node'),
    AGE_COLUMN,
    column('Version', 'string', 'Kubelet Version reported by the node.'),
    ...['Internal-IP', 'External-IP'].map((name) =>
      column(
        name,
        'string',
        "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).",
        { priority: 1 },
      ),
    ),
    column(
      'OS-Image',
      'string',
      'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
      {
        priority: 1,
      },
    ),
    column(
      'Kernel-Version',
      'string',
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      {
        priority: 1,
      },
    ),
    column(
      'Container-Runtime',
      'string',
      'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
      { priority: 1 },
    ),
  ],
  print(node, now) {
    const info = rec(rec(node.status).nodeInfo);
    return {
      cells: [
        str(node.metadata.name),
        nodeStatus(node),
        nodeRoles(node).join(',') || '<none>',
        age(node.metadata, now),
        str(info.kubeletVersion),
        nodeAddress(node, 'InternalIP'),
        nodeAddress(node, 'ExternalIP'),
        str(info.osImage) || '<unknown>',
        str(info.kernelVersion) || '<unknown>',
        str(info.containerRuntimeVersion) || '<unknown>',
      ],
    };
  },
};

/** Namespaces: NAME, STATUS, AGE. */
export const NAMESPACE_PRINTER: Printer = {
  columns: [NAME_COLUMN, column('Status', 'string', 'The status of the namespace'), AGE_COLUMN],
  print: (ns, now) => ({ cells: [str(ns.metadata.name), str(rec(ns.status).phase), age(ns.metadata, now)] }),
};

/** ConfigMaps: NAME, DATA (keys of data and binaryData), AGE. */
export const CONFIG_MAP_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Data',
      'string',
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    AGE_COLUMN,
  ],
  print: (cm, now) => ({
    cells: [str(cm.metadata.name), keyCount(cm.data) + keyCount(cm.binaryData), age(cm.metadata, now)],
  }),
};

/** Secrets: NAME, TYPE, DATA (keys of data), AGE. */
export const SECRET_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Type',
      'string',
      'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
    ),
    column(
      'Data',
      'string',
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    AGE_COLUMN,
  ],
  print: (secret, now) => ({
    cells: [str(secret.metadata.name), str(secret.type), keyCount(secret.data), age(secret.metadata, now)],
  }),
};

/** ServiceAccounts: NAME, SECRETS (count), AGE. */
export const SERVICE_ACCOUNT_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Secrets',
      'string',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret',
    ),
    AGE_COLUMN,
  ],
  print: (sa, now) => ({ cells: [str(sa.metadata.name), arr(sa.secrets).length, age(sa.metadata, now)] }),
};

/** Leases: NAME, HOLDER, AGE. */
export const LEASE_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column(
      'Holder',
      'string',
      'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
    ),
    AGE_COLUMN,
  ],
  print: (lease, now) => ({
    cells: [str(lease.metadata.name), str(rec(lease.spec).holderIdentity), age(lease.metadata, now)],
  }),
};
