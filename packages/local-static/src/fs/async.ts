// The provisioner's file-system calls, as promises over Node.js's callback API rather than from `node:fs/promises`:
// that module loads Node.js's readline, its REPL history, directory, watcher and stream code with it, none of which
// the provisioner uses. Without it the binary at rest took 58.7–58.8 MiB instead of 60.2–60.3 with plain `node`
// (bench/README.md, "Where the memory goes at rest").
import {
  lstat as lstatCallback,
  readdir as readdirCallback,
  readFile as readFileCallback,
  realpath as realpathCallback,
  stat as statCallback,
  statfs as statfsCallback,
} from 'node:fs';
import { promisify } from 'node:util';

/** `fs.readdir`: the names in a directory. */
export const readdir: (path: string) => Promise<string[]> = promisify(readdirCallback);

/** `fs.readFile`, as text. */
export const readFile: (path: string, encoding: 'utf8') => Promise<string> = promisify(readFileCallback);

/** `fs.lstat`. */
export const lstat = promisify(lstatCallback);

/** `fs.stat` (`{ bigint: true }`: sizes and device numbers as bigints). */
export const stat = promisify(statCallback);

/** `fs.statfs` (`{ bigint: true }`: block counts as bigints). */
export const statfs = promisify(statfsCallback);

/** `fs.realpath`. */
export const realpath: (path: string) => Promise<string> = promisify(realpathCallback);
