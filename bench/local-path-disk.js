// The local-path run's check on the nodes' disks: every Bound claim's directory exists under the root of the node
// the claim was meant for, with the setup script's mode; after deletion, none is left.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

function nodeOfVolume(pv, annotation) {
  const fromAnnotation = pv.metadata?.annotations?.[annotation];
  if (fromAnnotation !== undefined) return fromAnnotation;
  const term = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0];
  return term?.matchExpressions?.find((e) => e.operator === 'In')?.values?.[0];
}

/**
 * Checks the directory of every claim in `created` (uid → time): its PV (through `volumeOf` and `pvs`) must name the
 * node of `selectedNode`, its path must be `<basePath>/<pv>_default_<claim>`, and `<node root><path>` must be a
 * directory with permission bits `mode`. Returns the counts and the directories found (`dirs`, for the deletion).
 */
export async function checkDirectories({
  created,
  volumeOf,
  pvs,
  selectedNode,
  claimName,
  roots,
  basePath,
  mode,
  pvNodeAnnotation,
}) {
  const result = { ok: 0, notBound: 0, missing: 0, wrongMode: 0, wrongNode: 0, wrongPath: 0, problems: [], dirs: [] };
  const problem = (kind, text) => {
    result[kind] += 1;
    if (result.problems.length < 10) result.problems.push(text);
  };
  for (const uid of created.keys()) {
    const claim = claimName.get(uid);
    const pvName = volumeOf.get(uid);
    const pv = pvName === undefined ? undefined : pvs.get(pvName);
    if (pv === undefined) {
      problem('notBound', `${claim}: not Bound, or its PV was not seen`);
      continue;
    }
    const node = nodeOfVolume(pv, pvNodeAnnotation);
    if (node !== selectedNode.get(uid) || !roots.has(node)) {
      problem('wrongNode', `${claim}: PV ${pvName} is on node ${node}, the claim selected ${selectedNode.get(uid)}`);
      continue;
    }
    const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '';
    if (path !== `${basePath}/${pvName}_default_${claim}`)
      problem('wrongPath', `${claim}: PV ${pvName} has path ${path}`);
    const dir = join(roots.get(node), path);
    const st = await stat(dir).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) {
      problem('missing', `${claim}: ${dir} does not exist`);
      continue;
    }
    result.dirs.push(dir);
    if ((st.mode & 0o7777) !== mode)
      problem('wrongMode', `${claim}: ${dir} has mode ${(st.mode & 0o7777).toString(8)}, not ${mode.toString(8)}`);
    else result.ok += 1;
  }
  return result;
}

/** How many of `dirs` still exist. */
export async function remainingDirectories(dirs) {
  const exists = await Promise.all(
    dirs.map((d) =>
      stat(d).then(
        () => true,
        () => false,
      ),
    ),
  );
  return exists.filter(Boolean).length;
}
