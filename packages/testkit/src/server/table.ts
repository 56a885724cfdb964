/**
 * Server-side printing: the `meta.k8s.io/v1` Table that `kubectl get` asks for and prints. The per-kind printers
 * live in `./table/`.
 */

export { toTable } from './table/convert.js';
export { humanDuration } from './table/common.js';
export type {
  IncludeObject,
  PartialObjectMetadata,
  Table,
  TableCell,
  TableColumnDefinition,
  TableListMeta,
  TableRow,
  TableRowCondition,
  ToTableOptions,
} from './table/types.js';
