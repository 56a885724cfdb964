// The command line of `pnpm images`.
import { ImagesError } from './errors.ts';

/** The help; `names` are the images there are. */
export function usage(names: readonly string[]): string {
  return `Usage: pnpm images [-- options]

Builds the provisioners' container images with buildah (no daemon) into OCI archives, images/<name>.oci.tar, each
named as the manifests and charts reference it (ghcr.io/kprov/<package>:<version>), then prints each image's size
and its start-up time to ready: from starting it as its manifest in packages/<package>/deploy does until its
readiness endpoint answers 200, against the testkit's API server.

Options:
  --only NAME    build only this image (repeatable): ${names.join(', ')}
  --base IMAGE   the Node.js base image to build on (env KPROV_IMAGES_BASE), e.g. node:24-bookworm-slim.
                 Default: docker.io/library/node:24-bookworm-slim when it can be pulled, else a local equivalent
                 built with debootstrap and Node.js from the npm registry, kept in buildah's storage
                 (localhost/kprov/node:24-bookworm-slim)
  -h, --help     print this help and exit

Needs buildah (Debian package buildah) and, for the local base, debootstrap (Debian package debootstrap), and root.
The start-up times need the testkit built (pnpm build).`;
}

export interface Options {
  help: boolean;
  /** The images to build, by name; empty: all. */
  only: string[];
  /** The base image given, or undefined for the default with its fallback. */
  base: string | undefined;
}

/** Parses the arguments (a `--` that pnpm passes along is ignored); `names` are the images `--only` accepts. */
export function parseOptions(args: string[], env: NodeJS.ProcessEnv, names: readonly string[]): Options {
  const options: Options = { help: false, only: [], base: nonEmpty(env.KPROV_IMAGES_BASE) };
  const rest = args.filter((a) => a !== '--');
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? splitOnce(arg) : [arg, undefined];
    const value = (): string => {
      const v = inline ?? rest[++i];
      if (v === undefined || v === '') throw new ImagesError(`${flag} needs a value (see --help)`);
      return v;
    };
    switch (flag) {
      case '-h':
      case '--help':
        options.help = true;
        break;
      case '--only': {
        const name = value();
        if (!names.includes(name)) throw new ImagesError(`--only ${name}: no such image; one of ${names.join(', ')}`);
        options.only.push(name);
        break;
      }
      case '--base':
        options.base = value();
        break;
      default:
        throw new ImagesError(`unknown argument ${arg} (see --help)`);
    }
  }
  return options;
}

function splitOnce(arg: string): [string, string] {
  const at = arg.indexOf('=');
  return [arg.slice(0, at), arg.slice(at + 1)];
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
