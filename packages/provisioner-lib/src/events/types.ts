/** The type of an Event. Kubernetes knows only these two. */
export type EventType = 'Normal' | 'Warning';

/**
 * What an Event is about: a core/v1 `ObjectReference`. For a cluster-scoped object (a PersistentVolume) leave
 * `namespace` out; the Event then goes to namespace `default`, as client-go does.
 */
export interface ObjectReference {
  kind: string;
  /** For example `v1`; omitted from the Event when not set. */
  apiVersion?: string;
  /** Omitted (or empty) for cluster-scoped objects. */
  namespace?: string;
  name: string;
  uid?: string;
  /** The object's resourceVersion when the event happened; not part of the de-duplication key. */
  resourceVersion?: string;
  /** A field inside the object, for example `spec.containers{app}`; rarely used. */
  fieldPath?: string;
}

/** Who reports the Event: `source.component` is the controller name, `source.host` the node or pod, if any. */
export interface EventSource {
  component: string;
  host?: string;
}

/**
 * A core/v1 Event as the recorder and the correlator see it before it is written. Timestamps are whole seconds,
 * as metav1.Time carries them.
 */
export interface PendingEvent {
  /** `<involvedObject.name>.<unix-nano timestamp in hex>` when first created; the existing name on a repeat. */
  name: string;
  namespace: string;
  involvedObject: ObjectReference;
  source: EventSource;
  type: EventType;
  reason: string;
  message: string;
  /** How many times this Event has happened, 1 the first time. */
  count: number;
  firstTimestamp: Date;
  lastTimestamp: Date;
}

/** The JSON merge patch the recorder sends for a repeated Event. */
export interface EventPatch {
  count: number;
  /** RFC 3339, whole seconds. */
  lastTimestamp: string;
  message: string;
}

/** Formats a Date as metav1.Time does on the wire: RFC 3339 in UTC, whole seconds. */
export function formatTime(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
