/** Renders a `meta.k8s.io/v1` Table as text, the way `kubectl get` prints the Table a server returns. */

import { isPlainObject } from '../api/objects.js';
import { alignTabs } from './tabwriter.js';

/** The parts of a Table the text needs: a `Table` from `toTable`, or the parsed JSON of one. */
export interface TableLike {
  columnDefinitions?: readonly { name: string; priority?: number }[] | null;
  rows?: readonly { cells?: readonly unknown[] | null; object?: unknown }[] | null;
}

/** Options of {@link formatTable}, after kubectl's flags. */
export interface FormatTableOptions {
  /** `-o wide`: also the columns of priority above 0. */
  wide?: boolean;
  /** A leading NAMESPACE column from each row's object, as with `--all-namespaces`. */
  namespaceColumn?: boolean;
}

/** Go's `fmt.Sprint` of a decoded JSON value: `[a b]` for arrays, `map[k:v]` with sorted keys for objects. */
function goSprint(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goSprint).join(' ')}]`;
  if (isPlainObject(v)) {
    const entries = Object.keys(v)
      .sort()
      .map((k) => `${k}:${goSprint(v[k])}`);
    return `map[${entries.join(' ')}]`;
  }
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint')
    return String(v);
  return '';
}

/** Makes terminal control characters visible, as kubectl's `printers.EscapeTerminal` does. */
function escapeTerminal(s: string): string {
  return s.replaceAll('\x1b', '^[').replaceAll('\r', '\\r');
}

/** A cell's text: strings cut at the first line break (marked `...`), other values printed as Go would. */
function cellText(cell: unknown): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell !== 'string') return escapeTerminal(goSprint(cell));
  const cut = cell.search(/[\f\n\r]/);
  return cut < 0 ? escapeTerminal(cell) : `${escapeTerminal(cell.slice(0, cut))}...`;
}

/** The namespace of a row's object (its PartialObjectMetadata or full object); empty without one. */
function rowNamespace(object: unknown): string {
  const namespace = isPlainObject(object) && isPlainObject(object.metadata) ? object.metadata.namespace : undefined;
  return typeof namespace === 'string' ? namespace : '';
}

/**
 * The text `kubectl get` prints for a Table: upper-cased column names, then one line per row, columns aligned as
 * kubectl's tabwriter does (each as wide as its widest cell plus three spaces, at least six), priority>0 columns
 * only when `wide`, and a NAMESPACE column first when asked. Like kubectl, prints nothing (`''`) for a Table
 * without rows; kubectl's "No resources found" notice goes to stderr and is not part of this text.
 */
export function formatTable(table: TableLike, options: FormatTableOptions = {}): string {
  const columns = table.columnDefinitions ?? [];
  const rows = table.rows ?? [];
  if (rows.length === 0) return '';
  const shown = (i: number): boolean => options.wide === true || (columns[i]?.priority ?? 0) === 0;
  const namespace = options.namespaceColumn === true;

  const header = columns.filter((_, i) => shown(i)).map((c) => c.name.toUpperCase());
  const lines = [namespace ? ['NAMESPACE', ...header] : header];
  for (const row of rows) {
    const line = namespace ? [rowNamespace(row.object)] : [];
    // More cells than columns is a server bug kubectl tolerates by ignoring the extra cells.
    for (const [i, cell] of (row.cells ?? []).slice(0, columns.length).entries()) {
      if (shown(i)) line.push(cellText(cell));
    }
    lines.push(line);
  }
  return alignTabs(lines.map((l) => `${l.join('\t')}\n`).join(''));
}
