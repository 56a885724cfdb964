// The tools `pnpm images` needs beside Node.js, each with the Debian package it comes in.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ImagesError } from './errors.ts';

const DEBIAN_PACKAGE = { buildah: 'buildah', debootstrap: 'debootstrap', npm: 'npm' } as const;

/** Fails, naming the Debian package to install, when `tool` is not on the PATH; `purpose` says what it is for. */
export function requireTool(tool: keyof typeof DEBIAN_PACKAGE, purpose: string): void {
  // debootstrap is in /usr/sbin, which the PATH of a shell that became root with `su` may lack.
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'].filter((d) => d !== '');
  if (dirs.some((dir) => executable(join(dir, tool)))) return;
  const pkg = DEBIAN_PACKAGE[tool];
  throw new ImagesError(`${tool} not found (${purpose}): install the Debian package ${pkg} (apt-get install ${pkg})`);
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
