/** Event recording: {@link EventRecorder} and the client-go correlator behind it. */
export { EventRecorder, type EventRecorderOptions, type EventsApi } from './recorder.js';
export {
  EventCorrelator,
  combinedMessage,
  type CorrelatorOptions,
  type CorrelateResult,
  type WrittenEvent,
} from './correlator.js';
export { formatTime, type EventPatch, type EventSource, type EventType, type ObjectReference, type PendingEvent } from './types.js';
