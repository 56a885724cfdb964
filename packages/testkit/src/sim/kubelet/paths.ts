/**
 * Container paths → host paths. The simulated kubelet runs containers as plain host processes, so a path the pod
 * spec gives from inside the container (`/data/pvc-1`) must be rewritten to where that volume lives on the host
 * (`<node root>/opt/local-path-provisioner/pvc-1`). A {@link PathMapper} holds one container's mounts and rewrites
 * every occurrence of a mount path that starts and ends on a path boundary, longest mount path first, in one pass
 * (text it produced is never rewritten again).
 */
import path from 'node:path';

/** One volume mount of a container: where the container sees it and where it is on the host. */
export interface MountMapping {
  containerPath: string;
  hostPath: string;
}

/** Characters that continue a path component: a mount path followed or preceded by one is not a match. */
const PATH_CHAR = /[A-Za-z0-9._~+@%-]/;

function normalize(p: string): string {
  const n = path.posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

/** Rewrites container paths to host paths for one container; see the module comment. */
export class PathMapper {
  private readonly mounts: MountMapping[];

  constructor(mounts: readonly MountMapping[]) {
    // `/` is never mapped: every absolute path would match. Longest first, so `/data/x` wins over `/data`.
    this.mounts = mounts
      .map((m) => ({ containerPath: normalize(m.containerPath), hostPath: m.hostPath }))
      .filter((m) => m.containerPath.startsWith('/') && m.containerPath !== '/')
      .sort((a, b) => b.containerPath.length - a.containerPath.length);
  }

  /** Every occurrence of a mount path (on path boundaries) replaced by its host path. */
  rewrite(text: string): string {
    if (this.mounts.length === 0) return text;
    let out = '';
    let i = 0;
    while (i < text.length) {
      const m = text[i] === '/' ? this.matchAt(text, i) : undefined;
      if (m === undefined) {
        out += text[i];
        i += 1;
      } else {
        out += m.hostPath;
        i += m.containerPath.length;
      }
    }
    return out;
  }

  private matchAt(text: string, i: number): MountMapping | undefined {
    const before = i === 0 ? '' : (text[i - 1] ?? '');
    if (before === '/' || PATH_CHAR.test(before)) return undefined;
    return this.mounts.find((m) => {
      if (!text.startsWith(m.containerPath, i)) return false;
      const after = text[i + m.containerPath.length];
      return after === undefined || after === '/' || !PATH_CHAR.test(after);
    });
  }

  /** The host path of a container path inside a mount (e.g. a `workingDir`), or `undefined` when not mounted. */
  resolve(containerPath: string): string | undefined {
    const p = normalize(containerPath);
    const m = this.mounts.find((x) => p === x.containerPath || p.startsWith(`${x.containerPath}/`));
    return m === undefined ? undefined : m.hostPath + p.slice(m.containerPath.length);
  }
}
