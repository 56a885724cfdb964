/** The `meta.k8s.io/v1` Table shapes, as kube-apiserver writes them for `Accept: application/json;as=Table;...`. */

import type { KubeObject, ObjectMeta } from '../../api/objects.js';

/** A cell value: the printers emit strings, integers and booleans; `null` shows as an empty cell. */
export type TableCell = string | number | boolean | null;

/** One column of a Table (`metav1.TableColumnDefinition`); every field is always present on the wire. */
export interface TableColumnDefinition {
  /** Human-readable name; kubectl upper-cases it for the header. */
  name: string;
  /** OpenAPI type of the cells: `string`, `integer`, `boolean`, `date`, ... */
  type: string;
  /** OpenAPI format hint, `name` for the object-name column, else `''`. */
  format: string;
  description: string;
  /** 0 for the default view; higher numbers are shown only with `-o wide`. */
  priority: number;
}

/** A condition on a row (`metav1.TableRowCondition`), e.g. `Completed` for finished pods. */
export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The object metadata only, as rows carry it for `includeObject=Metadata` (kubectl's default). */
export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: 'meta.k8s.io/v1';
  metadata: ObjectMeta;
}

/** One row (`metav1.TableRow`): one cell per column definition, plus the object as `includeObject` asks. */
export interface TableRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
  /** The full object, its metadata, or absent for `includeObject=None`. */
  object?: KubeObject | PartialObjectMetadata;
}

/** List metadata of a Table (`metav1.ListMeta`); empty fields are left out as the server omits them. */
export interface TableListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A `meta.k8s.io/v1` Table. */
export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: TableListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** What the row objects carry, from the request's `includeObject` parameter. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Options of {@link toTable}. */
export interface ToTableOptions {
  /** Defaults to `Metadata`, as the server does when the parameter is absent. */
  includeObject?: IncludeObject;
  /** The list's resourceVersion; left out of the Table when empty. */
  resourceVersion: string;
  /** The list's continue token, when the list was paginated and has more. */
  continueToken?: string;
  /** The list's remainingItemCount, when the list was paginated. */
  remainingItemCount?: number;
  /** The time ages are computed against; defaults to the current time. */
  now?: Date;
}

/** What a printer makes of one object: its cells, and row conditions when it has any. */
export interface PrintedRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
}

/** A kind's column set and row function, as `AddHandlers` in kube-apiserver's printers registers them. */
export interface Printer {
  columns: readonly TableColumnDefinition[];
  /** Prints one object; `now` is in epoch milliseconds. */
  print(obj: KubeObject, now: number): PrintedRow;
}
