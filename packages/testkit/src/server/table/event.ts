/** The Event printer, for core/v1 Events and events.k8s.io/v1 Events (which the server prints the same way). */

import type { KubeObject } from '../../api/objects.js';
import { NAME_DESCRIPTION, column, int, parseMicroTime, parseTime, rec, since, str } from './common.js';
import type { Printer } from './types.js';

/** The fields the printer reads, in the internal (core) Event's terms. */
interface EventFields {
  involvedObject: Record<string, unknown>;
  type: string;
  reason: string;
  message: string;
  source: Record<string, unknown>;
  reportingController: string;
  reportingInstance: string;
  firstTimestamp: number | undefined;
  lastTimestamp: number | undefined;
  eventTime: number | undefined;
  count: number;
  series: Record<string, unknown> | undefined;
}

function seriesOf(v: unknown): Record<string, unknown> | undefined {
  return v === undefined || v === null ? undefined : rec(v);
}

/** Reads a core/v1 Event, or an events.k8s.io/v1 one through the field mapping of its conversion. */
function eventFields(ev: KubeObject, eventsGroup: boolean): EventFields {
  if (eventsGroup) {
    return {
      involvedObject: rec(ev.regarding),
      type: str(ev.type),
      reason: str(ev.reason),
      message: str(ev.note),
      source: rec(ev.deprecatedSource),
      reportingController: str(ev.reportingController),
      reportingInstance: str(ev.reportingInstance),
      firstTimestamp: parseTime(ev.deprecatedFirstTimestamp),
      lastTimestamp: parseTime(ev.deprecatedLastTimestamp),
      eventTime: parseMicroTime(ev.eventTime),
      count: int(ev.deprecatedCount),
      series: seriesOf(ev.series),
    };
  }
  return {
    involvedObject: rec(ev.involvedObject),
    type: str(ev.type),
    reason: str(ev.reason),
    message: str(ev.message),
    source: rec(ev.source),
    // core/v1 names the internal ReportingController field `reportingComponent` on the wire.
    reportingController: str(ev.reportingComponent),
    reportingInstance: str(ev.reportingInstance),
    firstTimestamp: parseTime(ev.firstTimestamp),
    lastTimestamp: parseTime(ev.lastTimestamp),
    eventTime: parseMicroTime(ev.eventTime),
    count: int(ev.count),
    series: seriesOf(ev.series),
  };
}

/** `component, host`, falling back to the reporting controller and instance of the newer API. */
function eventSource(e: EventFields): string {
  const component = str(e.source.component) || e.reportingController;
  const instance = str(e.source.host) || e.reportingInstance;
  return instance === '' ? component : `${component}, ${instance}`;
}

const EVENT_COLUMNS = [
  column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
  column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
  column(
    'Reason',
    'string',
    "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
  ),
  column('Object', 'string', 'The object that this event is about.'),
  column(
    'Subobject',
    'string',
    'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
    { priority: 1 },
  ),
  column('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.', {
    priority: 1,
  }),
  column('Message', 'string', 'A human-readable description of the status of this operation.'),
  column(
    'First Seen',
    'string',
    'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
    {
      priority: 1,
    },
  ),
  column('Count', 'string', 'The number of times this event has occurred.', { priority: 1 }),
  column('Name', 'string', NAME_DESCRIPTION, { format: 'name', priority: 1 }),
];

function printer(eventsGroup: boolean): Printer {
  return {
    columns: EVENT_COLUMNS,
    print(ev, now) {
      const e = eventFields(ev, eventsGroup);
      const firstSeen = e.firstTimestamp === undefined ? since(e.eventTime, now) : since(e.firstTimestamp, now);
      let lastSeen = e.lastTimestamp === undefined ? firstSeen : since(e.lastTimestamp, now);
      let count = e.count;
      if (e.series !== undefined) {
        lastSeen = since(parseMicroTime(e.series.lastObservedTime), now);
        count = int(e.series.count);
      } else if (count === 0) {
        count = 1; // singleton events of the newer API carry no count
      }
      const kind = str(e.involvedObject.kind).toLowerCase();
      const name = str(e.involvedObject.name);
      return {
        cells: [
          lastSeen,
          e.type,
          e.reason,
          name === '' ? kind : `${kind}/${name}`,
          str(e.involvedObject.fieldPath),
          eventSource(e),
          e.message.trim(),
          firstSeen,
          count,
          str(ev.metadata.name),
        ],
      };
    },
  };
}

/** core/v1 Events: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; wide SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME. */
export const EVENT_PRINTER: Printer = printer(false);

/** events.k8s.io/v1 Events: the core columns, read through `regarding`, `note` and the `deprecated*` fields. */
export const EVENTS_GROUP_EVENT_PRINTER: Printer = printer(true);
