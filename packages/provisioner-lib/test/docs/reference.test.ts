/**
 * The reference tables of docs/provisioner-lib.md against the library's source: every Kubernetes Event reason the
 * library writes and every metric it declares is in the page's "Event reasons and metrics" tables, and the tables
 * name nothing the source lacks; every common flag of the runtime is in both flag tables.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMON_FLAGS } from '../../src/runtime/common-flags.js';

const PACKAGE = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = readFileSync(join(PACKAGE, '../../docs/provisioner-lib.md'), 'utf8');

/** The text of every source file of the library (tests excluded). */
function sources(dir = join(PACKAGE, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [readFileSync(path, 'utf8')] : [];
  });
}

/** The section of the page under `heading` (up to the next heading of its level or above). */
function section(heading: string): string {
  const start = PAGE.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/provisioner-lib.md has no "${heading}"`);
  const level = /^#+/.exec(heading)![0];
  const end = PAGE.slice(start + heading.length + 2).search(new RegExp(`^#{1,${level.length}} `, 'm'));
  return PAGE.slice(start, end < 0 ? undefined : start + heading.length + 2 + end);
}

/** The first column of the rows of the table whose header starts with `| <first> |`, without backquotes. */
function firstColumn(text: string, first: string): string[] {
  const table = text.slice(text.indexOf(`| ${first} |`)).split('\n\n')[0]!;
  return table
    .split('\n')
    .slice(2)
    .map((row) => row.split('|')[1]!.trim().replaceAll('`', ''));
}

const code = sources().join('\n');

/**
 * Event reasons: the literal after an event type in a call (`claim, 'Warning', 'ProvisioningFailed',`), and the
 * Lease's reason.
 */
const reasons = new Set([
  ...[...code.matchAll(/,\s*'(?:Normal|Warning)',\s*'([A-Za-z]+)',/g)].map((m) => m[1]!),
  ...[...code.matchAll(/EVENT_REASON = '([A-Za-z]+)'/g)].map((m) => m[1]!),
]);

/** Metric names: the Go library's under its `controller` subsystem, and every other metric name literal. */
const metrics = new Set([
  ...[...code.matchAll(/fullName\(subsystem, '([a-z_]+)'\)/g)].map((m) => `controller_${m[1]!}`),
  ...[...code.matchAll(/'((?:workqueue|leader_election|event_recorder)_[a-z_]+)'/g)].map((m) => m[1]!),
]);

describe('the Event reasons and metrics of docs/provisioner-lib.md', () => {
  const reference = section('## Event reasons and metrics');

  it('lists every Event reason the library writes, and no other', () => {
    expect(reasons.size).toBeGreaterThanOrEqual(7);
    expect(new Set(firstColumn(reference, 'Event reason'))).toEqual(reasons);
  });

  it('lists every metric the library declares, and no other', () => {
    expect(metrics.size).toBeGreaterThanOrEqual(15);
    expect(new Set(firstColumn(reference, 'metric'))).toEqual(metrics);
  });
});

describe('the common flags of docs/provisioner-lib.md', () => {
  const flags = section('### The common flags');
  const name = (cell: string): string => /^-+([a-z-]+)/.exec(cell)![1]!;

  it('lists every flag of the runtime with its options field and default, and no other', () => {
    expect(new Set(firstColumn(flags, 'flag').map(name))).toEqual(new Set(Object.keys(COMMON_FLAGS)));
  });

  it('compares every flag with external-provisioner and the Go library', () => {
    const compared = firstColumn(section('#### Against external-provisioner and the Go library'), 'flag')
      .filter((cell) => cell.startsWith('-'))
      .flatMap((cell) => cell.split(/\s*[,/]\s*/).map(name));
    expect(new Set(compared)).toEqual(new Set(Object.keys(COMMON_FLAGS)));
  });
});
