/** Turns objects into a `meta.k8s.io/v1` Table: the kind's printer when it has one, else the default columns. */

import { clone, type KubeObject } from '../../api/objects.js';
import { apiVersionOf, type ResourceType } from '../../api/resources.js';
import {
  CONFIG_MAP_PRINTER,
  LEASE_PRINTER,
  NAMESPACE_PRINTER,
  NODE_PRINTER,
  SECRET_PRINTER,
  SERVICE_ACCOUNT_PRINTER,
} from './cluster.js';
import { CREATION_DESCRIPTION, NAME_COLUMN, column, parseTime, str } from './common.js';
import { EVENTS_GROUP_EVENT_PRINTER, EVENT_PRINTER } from './event.js';
import { JOB_PRINTER } from './job.js';
import { POD_PRINTER } from './pod.js';
import { PERSISTENT_VOLUME_CLAIM_PRINTER, PERSISTENT_VOLUME_PRINTER, STORAGE_CLASS_PRINTER } from './storage.js';
import type { IncludeObject, Printer, Table, TableListMeta, TableRow, ToTableOptions } from './types.js';

/** Printers by `group/Kind`, as kube-apiserver's internal printers register them (events.k8s.io reuses core's). */
const PRINTERS: ReadonlyMap<string, Printer> = new Map([
  ['/Pod', POD_PRINTER],
  ['/Node', NODE_PRINTER],
  ['/Namespace', NAMESPACE_PRINTER],
  ['/PersistentVolume', PERSISTENT_VOLUME_PRINTER],
  ['/PersistentVolumeClaim', PERSISTENT_VOLUME_CLAIM_PRINTER],
  ['/ConfigMap', CONFIG_MAP_PRINTER],
  ['/Secret', SECRET_PRINTER],
  ['/ServiceAccount', SERVICE_ACCOUNT_PRINTER],
  ['/Event', EVENT_PRINTER],
  ['events.k8s.io/Event', EVENTS_GROUP_EVENT_PRINTER],
  ['storage.k8s.io/StorageClass', STORAGE_CLASS_PRINTER],
  ['coordination.k8s.io/Lease', LEASE_PRINTER],
  ['batch/Job', JOB_PRINTER],
]);

/** creationTimestamp in RFC 3339 UTC, as Go formats a `metav1.Time`; the zero time when it is missing. */
function createdAt(obj: KubeObject): string {
  const at = parseTime(obj.metadata.creationTimestamp);
  return at === undefined ? '0001-01-01T00:00:00Z' : new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The apiserver's default convertor for types without a printer: Name and Created At. */
const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COLUMN, column('Created At', 'date', CREATION_DESCRIPTION)],
  print: (obj) => ({ cells: [str(obj.metadata.name), createdAt(obj)] }),
};

/** What a row carries as `object` for the request's `includeObject`. */
function rowObject(r: ResourceType, obj: KubeObject, include: IncludeObject): TableRow['object'] {
  if (include === 'None') return undefined;
  if (include === 'Metadata') {
    return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: clone(obj.metadata) };
  }
  const { kind, apiVersion, ...rest } = clone(obj);
  return { kind: kind ?? r.kind, apiVersion: apiVersion ?? apiVersionOf(r), ...rest };
}

/**
 * A `meta.k8s.io/v1` Table of `objects` (of type `resource`), with the columns and cells kube-apiserver's printers
 * produce (`pkg/printers/internalversion`), all columns included as the server always prints wide, and each row's
 * `object` as `includeObject` asks: the PartialObjectMetadata (the default, kubectl's choice), the full object, or
 * nothing. Types without a printer get the default Name / Created At columns.
 */
export function toTable(resource: ResourceType, objects: KubeObject[], options: ToTableOptions): Table {
  const printer = PRINTERS.get(`${resource.group}/${resource.kind}`) ?? DEFAULT_PRINTER;
  const now = options.now?.getTime() ?? Date.now();
  const include = options.includeObject ?? 'Metadata';
  const metadata: TableListMeta = {};
  if (options.resourceVersion !== '') metadata.resourceVersion = options.resourceVersion;
  if (options.continueToken !== undefined && options.continueToken !== '') metadata.continue = options.continueToken;
  if (options.remainingItemCount !== undefined) metadata.remainingItemCount = options.remainingItemCount;
  const rows = objects.map((obj): TableRow => {
    const printed = printer.print(obj, now);
    const row: TableRow = { cells: printed.cells };
    if (printed.conditions !== undefined) row.conditions = printed.conditions;
    const object = rowObject(resource, obj, include);
    if (object !== undefined) row.object = object;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata,
    columnDefinitions: printer.columns.map((c) => ({ ...c })),
    rows,
  };
}
