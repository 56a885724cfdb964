import type { PendingEvent } from './types.js';

/** Values given a short id at most; later new values are written out in full. */
const DEFAULT_ID_CAPACITY = 1024;
/** Longer values are always written out in full: the table would hold them for nothing. */
const MAX_ID_LENGTH = 256;

/**
 * The correlator's cache keys: each is a tuple of strings (source, involved object, …), and two events share a key
 * exactly when their tuples are equal, as with client-go's keys (except that client-go joins the fields with no
 * separator, so that two different tuples can make the same key there).
 *
 * A tuple is encoded as one flat string in which each field is either `#<id>#`, for values that repeat across
 * events (source, kind, apiVersion, namespace, fieldPath, type, reason), or `<length>:<value>` (name, uid,
 * message, and any value once `capacity` values have an id). Each field says where it ends, so different tuples,
 * even of different lengths, never make the same string; a value keeps the id it was given, so equal tuples always
 * do. The keys take about half the memory of the JSON of the tuple (the source, `<provisioner>_<identity>`, is
 * often 60 characters or more), and the correlator keeps up to three keys for each of thousands of objects.
 */
export class EventKeys {
  private readonly ids = new Map<string, string>();

  /** @param capacity - values given an id at most. Default 1024. */
  constructor(private readonly capacity = DEFAULT_ID_CAPACITY) {}

  /** Source and involved object: the spam filter's key. */
  object(e: PendingEvent): string {
    return this.join(this.objectParts(e));
  }

  /** Similar events (same source, object, type and reason): the aggregation key, and the key of a combined Event. */
  similar(e: PendingEvent): string {
    const parts = this.objectParts(e);
    parts.push(this.id(e.type), this.id(e.reason));
    return this.join(parts);
  }

  /** Identical events: same source, object (including fieldPath), type, reason and message. */
  identical(e: PendingEvent): string {
    const parts = this.objectParts(e);
    parts.push(this.id(e.involvedObject.fieldPath ?? ''), this.id(e.type), this.id(e.reason), literal(e.message));
    return this.join(parts);
  }

  private objectParts(e: PendingEvent): string[] {
    const o = e.involvedObject;
    return [
      this.id(e.source.component),
      this.id(e.source.host ?? ''),
      this.id(o.kind),
      this.id(o.namespace ?? ''),
      literal(o.name),
      literal(o.uid ?? ''),
      this.id(o.apiVersion ?? ''),
    ];
  }

  // `join` makes one flat string; concatenating with `+` would keep every part as a separate string.
  private join(parts: string[]): string {
    return parts.join('');
  }

  private id(value: string): string {
    const known = this.ids.get(value);
    if (known !== undefined) return known;
    if (this.ids.size >= this.capacity || value.length > MAX_ID_LENGTH) return literal(value);
    const id = `#${this.ids.size.toString(36)}#`;
    this.ids.set(value, id);
    return id;
  }
}

function literal(value: string): string {
  return `${value.length}:${value}`;
}
