/**
 * Switching from kuttiproject/provisioner-localvolume: the PVs kutti made (its annotations, `<root>/<PV name>`
 * directories) are deleted by the node-mode provisioner of the node they name, and only there; a PV without kutti's
 * provisionedBy annotation is left alone. On both tiers, three simulated nodes.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import {
  KUTTI_PROVISIONED_BY_ANNOTATION,
  KUTTI_PROVISIONED_ON_ANNOTATION,
  KUTTI_PROVISIONER_NAME,
} from '../../src/executor/node/kutti.js';
import { getVolume, storageClass, WAIT } from '../provisioner/helpers.js';
import { nodeEnv, type NodeEnv } from './env.js';

const ROOT = '/kutti/vols';
const NODES = ['node-1', 'node-2', 'node-3'];

/** A Released PV as kutti makes it on `node`, its directory with a file on that node's disk (and a decoy on node-1). */
async function kuttiVolume(
  e: NodeEnv,
  node: string,
  annotations: Record<string, string> = {
    [KUTTI_PROVISIONED_BY_ANNOTATION]: KUTTI_PROVISIONER_NAME,
    [KUTTI_PROVISIONED_ON_ANNOTATION]: node,
  },
): Promise<{ name: string; dir: string }> {
  const name = `pvc-${randomUUID()}`;
  for (const n of new Set([node, 'node-1'])) {
    const dir = e.onNode(n, `${ROOT}/${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/data`, n);
  }
  const pv: V1PersistentVolume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, annotations: { ...annotations, 'pv.kubernetes.io/provisioned-by': KUTTI_PROVISIONER_NAME } },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'kutti-delete',
      local: { path: `${ROOT}/${name}` },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: 'default',
        name: 'gone',
        uid: randomUUID(),
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
    },
  };
  await e.core.createPersistentVolume({ body: pv });
  return { name, dir: e.onNode(node, `${ROOT}/${name}`) };
}

describeTiers("node mode with kutti's PVs", () => {
  it('deletes each kutti PV on the node it names, and nothing on the other nodes', async () => {
    const e = await nodeEnv({
      nodes: NODES,
      kutti: true,
      provisionerName: KUTTI_PROVISIONER_NAME,
      config: JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [ROOT] }] }),
    });
    await e.storage.createStorageClass({
      body: { ...storageClass('kutti-delete'), provisioner: KUTTI_PROVISIONER_NAME },
    });
    const onTwo = await kuttiVolume(e, 'node-2');
    const onThree = await kuttiVolume(e, 'node-3');
    await vi.waitFor(async () => {
      expect(await getVolume(e, onTwo.name)).toBeUndefined();
      expect(await getVolume(e, onThree.name)).toBeUndefined();
    }, WAIT);
    expect(existsSync(onTwo.dir)).toBe(false);
    expect(existsSync(onThree.dir)).toBe(false);
    // The same paths on node-1's disk were not touched.
    expect(existsSync(e.onNode('node-1', `${ROOT}/${onTwo.name}/data`))).toBe(true);
    expect(existsSync(e.onNode('node-1', `${ROOT}/${onThree.name}/data`))).toBe(true);
  });

  it("leaves a PV without kutti's provisionedBy annotation to be deleted by hand", async () => {
    const e = await nodeEnv({
      nodes: ['node-1', 'node-2'],
      kutti: true,
      provisionerName: KUTTI_PROVISIONER_NAME,
      config: JSON.stringify({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [ROOT] }] }),
    });
    await e.storage.createStorageClass({
      body: { ...storageClass('kutti-delete'), provisioner: KUTTI_PROVISIONER_NAME },
    });
    const foreign = await kuttiVolume(e, 'node-2', { [KUTTI_PROVISIONED_ON_ANNOTATION]: 'node-2' });
    await vi.waitFor(async () => expect((await getVolume(e, foreign.name))?.status?.phase).toBe('Released'), WAIT);
    const released = (await getVolume(e, foreign.name))!;
    await expect(e.provisioners.get('node-2')!.delete(released, new AbortController().signal)).rejects.toThrow(
      'it was not made by a node-mode provisioner',
    );
    expect(existsSync(`${foreign.dir}/data`)).toBe(true);
  });
});
