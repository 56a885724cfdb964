/** Event recording: {@link EventRecorder}, with client-go's correlator behind it. */
export {
  DEFAULT_EVENT_WRITE_CONCURRENCY,
  EVENT_RECORDER_DROPPED_EVENTS,
  EventRecorder,
  type DroppedEventReason,
  type EventRecorderOptions,
  type EventsApi,
} from './recorder.js';
export type { CorrelatorOptions } from './correlator.js';
export type { EventSource, EventType, ObjectReference, PendingEvent } from './types.js';
