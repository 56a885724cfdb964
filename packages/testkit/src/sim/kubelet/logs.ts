/**
 * Which output a log request means, as the kubelet decides it (`pkg/kubelet/server/server.go` `getContainerLogs`,
 * `kubelet_pods.go` `validateContainerLogStatus`), and the `tailLines` cut.
 */
import type { LogBuffer } from './process.js';
import type { ContainerRecord } from './status.js';

/** The output of one container instance, or why there is none, with the kubelet's HTTP code and message. */
export type LogLookup = { buffer: LogBuffer } | { code: 400 | 404; message: string };

/** Finds the output a request for `container` of `pod` means; `record` is `undefined` for a container the pod does not have. */
export function lookupLog(
  pod: string,
  container: string,
  record: ContainerRecord | undefined,
  previous: boolean,
): LogLookup {
  if (record === undefined) return { code: 404, message: `container "${container}" not found in pod "${pod}"` };
  if (previous) {
    const buffer = record.logs.length > 1 ? record.logs[0] : undefined;
    return buffer === undefined
      ? { code: 400, message: `previous terminated container "${container}" in pod "${pod}" not found` }
      : { buffer };
  }
  const buffer = record.logs[record.logs.length - 1];
  if (buffer !== undefined) return { buffer };
  const reason = 'waiting' in record.state ? record.state.waiting.reason : undefined;
  const message = reason === undefined ? 'is waiting to start - no logs yet' : `is waiting to start: ${reason}`;
  return { code: 400, message: `container "${container}" in pod "${pod}" ${message}` };
}

/** The last `n` lines of a log (a trailing newline does not count as a line); all of it for `undefined` or a negative `n`. */
export function tail(text: string, n: number | undefined): string {
  if (n === undefined || n < 0) return text;
  if (n === 0) return '';
  const lines = text.split('\n');
  const trailing = lines[lines.length - 1] === '';
  if (trailing) lines.pop();
  const kept = lines.slice(-n).join('\n');
  return trailing && kept !== '' ? `${kept}\n` : kept;
}
