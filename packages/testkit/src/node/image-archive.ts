/**
 * Whether an image archive of `pnpm images` (`images/<package>.oci.tar`) can be given to a node-tier suite: a suite
 * skipped with one line when it cannot, rather than one that waits out its rollout on a node that does not have the
 * image its manifests name (an archive built before a version change).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The annotation of an OCI index entry naming the image (`buildah push ... oci-archive:<file>:<name>`). */
const REF_NAME = 'org.opencontainers.image.ref.name';

interface OciIndex {
  manifests?: { annotations?: Record<string, string> }[];
}

/**
 * The images an OCI archive names (its `index.json`'s `org.opencontainers.image.ref.name` annotations).
 *
 * @throws Error when the archive cannot be read (`tar` fails) or its `index.json` is not an OCI index.
 */
export function imageArchiveRefs(archive: string): string[] {
  const text = execFileSync('tar', ['-xOf', archive, 'index.json'], { encoding: 'utf8', stdio: 'pipe' });
  const index = JSON.parse(text) as OciIndex;
  if (!Array.isArray(index.manifests)) throw new Error(`${archive}: index.json has no manifests`);
  return index.manifests.flatMap((m) => (m.annotations?.[REF_NAME] === undefined ? [] : [m.annotations[REF_NAME]]));
}

/**
 * Why `archive` cannot give a node `image`, or `undefined` when it can: one line for a skipped suite's title that
 * says what to run. The archive missing (`images/ has no local-static.oci.tar: ...`), unreadable, or naming other
 * images (`... holds ghcr.io/kprov/local-static:0.2.6, not ...:0.2.7`: built before a version change).
 *
 * @param archive - the archive's path, e.g. `<root>/images/local-static.oci.tar`.
 * @param image - the image the suite's manifests run, e.g. `ghcr.io/kprov/local-static:0.2.7`.
 */
export function imageArchiveProblem(archive: string, image: string): string | undefined {
  const file = path.basename(archive);
  if (!existsSync(archive)) return `images/ has no ${file}: \`pnpm images\` builds them`;
  let refs: string[];
  try {
    refs = imageArchiveRefs(archive);
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return `images/${file} cannot be read (${reason}): \`pnpm images\` builds it again`;
  }
  if (refs.includes(image)) return undefined;
  const holds = refs.length === 0 ? 'names no image' : `holds ${refs.join(', ')}`;
  return `images/${file} ${holds}, not ${image}: \`pnpm images\` builds it again`;
}
