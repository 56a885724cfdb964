/**
 * Node mode's record of a volume directory whose PV is not saved yet, where default mode keeps the setup helper pod:
 * a small JSON file `<base path>/.local-path-pending/<pv name>.json` on the node's disk, written before the
 * directory is made and removed once the PV is saved (or the directory is removed). A record left by a crash tells
 * the next process that a directory may be orphaned ({@link listPending}).
 *
 * @module
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClaimIdentity } from '../../volume/teardown-guard.js';
import type { VolumeRecord } from '../executor.js';
import { onHost } from './node-dirs.js';

/** The folder of the records in each base path. */
export const PENDING_DIR = '.local-path-pending';

/** What a record holds: enough to tear the directory down with the checks of a PV deletion. */
export interface PendingRecord extends VolumeRecord {
  readonly claim: ClaimIdentity;
  /** The base path the directory was made in (a node path); the record lies in it. */
  readonly basePath: string;
}

function fileOf(hostRoot: string, basePath: string, pvName: string): string {
  return path.join(onHost(hostRoot, basePath), PENDING_DIR, `${pvName}.json`);
}

/** Writes the record (atomically: a crash leaves the old record or the new one). */
export async function writePending(hostRoot: string, record: PendingRecord): Promise<void> {
  const file = fileOf(hostRoot, record.basePath, record.pvName);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 });
  await rename(`${file}.tmp`, file);
}

/** Removes the record of `pvName` in `basePath`; nothing when there is none. */
export async function removePending(hostRoot: string, basePath: string, pvName: string): Promise<void> {
  await rm(fileOf(hostRoot, basePath, pvName), { force: true });
}

function isRecord(value: unknown): value is PendingRecord {
  const r = value as Partial<PendingRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.pvName === 'string' &&
    typeof r.path === 'string' &&
    typeof r.basePath === 'string' &&
    typeof r.node === 'string' &&
    typeof r.storageClassName === 'string' &&
    typeof r.claim?.namespace === 'string' &&
    typeof r.claim.name === 'string'
  );
}

/**
 * The records in the base paths `basePaths` (node paths); a record that does not parse, or names another base path
 * or PV than where it lies, is skipped.
 */
export async function listPending(hostRoot: string, basePaths: readonly string[]): Promise<PendingRecord[]> {
  const records: PendingRecord[] = [];
  for (const basePath of new Set(basePaths)) {
    const dir = path.join(onHost(hostRoot, basePath), PENDING_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        const parsed: unknown = JSON.parse(await readFile(path.join(dir, name), 'utf8'));
        if (isRecord(parsed) && parsed.basePath === basePath && `${parsed.pvName}.json` === name) records.push(parsed);
      } catch {
        // Unreadable: skipped.
      }
    }
  }
  return records;
}
