/** Event recording: {@link EventRecorder} and the client-go correlator behind it. */
export {
  DEFAULT_EVENT_WRITE_CONCURRENCY,
  EVENT_RECORDER_DROPPED_EVENTS,
  EventRecorder,
  type DroppedEventReason,
  type EventRecorderOptions,
  type EventsApi,
} from './recorder.js';
export {
  EventCorrelator,
  combinedMessage,
  type CorrelatorOptions,
  type CorrelateResult,
  type WrittenEvent,
} from './correlator.js';
export { formatTime, type EventPatch, type EventSource, type EventType, type ObjectReference, type PendingEvent } from './types.js';
