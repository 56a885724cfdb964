/** Object builders and helpers shared by the simulation tests (valid objects: the store validates every write). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import type { KubeObject } from '../../src/api/objects.js';
import type { ObjectStore } from '../../src/store/store.js';
import { PV_BINDER_WATCH_DELAY_MS } from '../../src/sim/binder.js';
import { WAIT } from '../../src/vitest.js';

export function storageClass(name: string, provisioner: string, extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, ...extra };
}

export function claim(
  name: string,
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', ...metadata },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  };
}

export function volume(
  name: string,
  spec: Record<string, unknown> = {},
  metadata: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, ...metadata },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      hostPath: { path: `/pvs/${name}` },
      ...spec,
    },
  };
}

/** A pod with one container `c`, and the volumes given. */
export function pod(
  name: string,
  container: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox', ...container }], restartPolicy: 'Never', ...spec },
  };
}

/** A pod that mounts the claim at `/data`. */
export function podWithClaim(name: string, claimName: string, spec: Record<string, unknown> = {}): KubeObject {
  return pod(
    name,
    { command: ['sh', '-c', 'true'], volumeMounts: [{ name: 'v', mountPath: '/data' }] },
    {
      volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }],
      ...spec,
    },
  );
}

/** A fresh temporary directory, removed by {@link removeTempDirs}. */
const dirs: string[] = [];
export function tempDir(prefix = 'kprov-sim-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/**
 * Lets queued loop work run: a few turns of the event loop (the loops drain on `setImmediate`), around a wait longer
 * than the PV binder's watch delay (it acts a few milliseconds after a change, as kube-controller-manager does).
 */
export async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 4 * PV_BINDER_WATCH_DELAY_MS));
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
}

/** A loosely typed view of stored JSON, for assertions (the shape of `JSON.parse`). */
export type Loose = ReturnType<typeof JSON.parse>;

/** A stored object as loose JSON (a copy), or `undefined`. */
export function get(store: ObjectStore, resource: string, namespace: string | undefined, name: string): Loose {
  const o = store.get(resource, namespace, name);
  return o === undefined ? undefined : JSON.parse(JSON.stringify(o));
}

/** The condition of a type in a stored object's `status.conditions`, or `undefined`. */
export function conditionOf(obj: Loose, type: string): Loose {
  const list: unknown = obj?.status?.conditions;
  if (!Array.isArray(list)) return undefined;
  const found: unknown = list.find((c: { type?: string }) => c.type === type);
  return found;
}

/** Retries an assertion until it passes (for the tests' WAIT at most: a busy machine is slow). */
export function eventually<T>(assertion: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(assertion, WAIT);
}
