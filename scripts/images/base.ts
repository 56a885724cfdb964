// The Node.js base image the provisioners' images are built on (the Dockerfile's NODE_IMAGE).
import { capture } from './exec.ts';
import { ImagesError } from './errors.ts';
import { LOCAL_BASE, localBase } from './local-base.ts';

/** The Dockerfile's default, fully named: buildah resolves no short names without a registries.conf that says how. */
export const PUBLIC_BASE = 'docker.io/library/node:24-bookworm-slim';

/** A registry that cannot be reached often fails at once (no DNS), but one that drops packets hangs. */
const PULL_TIMEOUT_MS = 30_000;

export interface Base {
  ref: string;
  /** What was done to have it, for the report: "pulled", "present", "built: ...", "reused (...)". */
  how: string;
}

/**
 * The base: the one given (pulled when not in buildah's storage), else the public one, else, when that cannot be
 * pulled, the local equivalent (built once and kept).
 */
export async function chooseBase(given: string | undefined, logDir: string): Promise<Base> {
  if (given !== undefined) {
    const ref = qualified(given);
    if (await present(ref)) return { ref, how: 'present' };
    try {
      await pull(ref);
    } catch (err) {
      throw new ImagesError(`--base ${given}: cannot pull ${ref}: ${reason(err)}`);
    }
    return { ref, how: 'pulled' };
  }
  if (await present(PUBLIC_BASE)) return { ref: PUBLIC_BASE, how: 'present' };
  try {
    await pull(PUBLIC_BASE);
    return { ref: PUBLIC_BASE, how: 'pulled' };
  } catch (err) {
    console.log(
      `images: ${PUBLIC_BASE} cannot be pulled (${reason(err)}); using a local equivalent instead, ${LOCAL_BASE}`,
    );
  }
  return localBase(logDir);
}

/** Whether buildah's storage has the image. */
export async function present(ref: string): Promise<boolean> {
  try {
    await capture('buildah', ['inspect', '--type', 'image', '--format', '{{.FromImageID}}', ref]);
    return true;
  } catch {
    return false;
  }
}

async function pull(ref: string): Promise<void> {
  await capture('buildah', ['pull', '--retry', '0', '--quiet', ref], { timeoutMs: PULL_TIMEOUT_MS });
}

/** The name as Docker reads it: `node:24` is docker.io/library/node:24, `kprov/x` docker.io/kprov/x. */
function qualified(name: string): string {
  const [first, ...rest] = name.split('/');
  const hasRegistry = rest.length > 0 && first !== undefined && (/[.:]/.test(first) || first === 'localhost');
  if (hasRegistry) return name;
  return rest.length === 0 ? `docker.io/library/${name}` : `docker.io/${name}`;
}

/** The last line of a failed pull: buildah's error. */
function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const last = text.trimEnd().split('\n').at(-1)?.trim() ?? text;
  return last.replace(/^Error: /, '');
}
