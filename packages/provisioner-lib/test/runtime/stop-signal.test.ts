/**
 * The stop signal of a run: the first SIGINT or SIGTERM (emitted here on the process's emitter; the child process
 * test sends real ones), an embedding program's AbortSignal, and the handlers removed afterwards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { stopSignal, type StopSignal } from '../../src/runtime/stop-signal.js';

const listeners = (): [number, number] => [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
const before = listeners();
let stop: StopSignal | undefined;
afterEach(() => {
  stop?.dispose();
  stop = undefined;
  expect(listeners()).toEqual(before);
});

describe('stopSignal', () => {
  it('aborts on the first SIGTERM, tells onSignal, and stops handling both signals', () => {
    const told: NodeJS.Signals[] = [];
    stop = stopSignal({ onSignal: (name) => told.push(name) });
    expect(listeners()).toEqual([before[0] + 1, before[1] + 1]);
    expect(stop.signal.aborted).toBe(false);
    process.emit('SIGTERM', 'SIGTERM');
    expect(stop.signal.aborted).toBe(true);
    expect(told).toEqual(['SIGTERM']);
    // A second signal would get Node's default action: ending the process at once.
    expect(listeners()).toEqual(before);
  });

  it('aborts on SIGINT as on SIGTERM', () => {
    const told: NodeJS.Signals[] = [];
    stop = stopSignal({ onSignal: (name) => told.push(name) });
    process.emit('SIGINT', 'SIGINT');
    expect(stop.signal.aborted).toBe(true);
    expect(told).toEqual(['SIGINT']);
  });

  it('leaves the signals alone with handleSignals false, and follows the given AbortSignal', () => {
    const outer = new AbortController();
    stop = stopSignal({ handleSignals: false, signal: outer.signal });
    expect(listeners()).toEqual(before);
    outer.abort();
    expect(stop.signal.aborted).toBe(true);
  });

  it('is aborted at once for an AbortSignal that already is, and can be aborted by its owner', () => {
    stop = stopSignal({ handleSignals: false, signal: AbortSignal.abort() });
    expect(stop.signal.aborted).toBe(true);
    const own = stopSignal({ handleSignals: false });
    own.abort();
    expect(own.signal.aborted).toBe(true);
    own.dispose();
  });

  it('stops listening once disposed', () => {
    const outer = new AbortController();
    stop = stopSignal({ signal: outer.signal });
    stop.dispose();
    expect(listeners()).toEqual(before);
    outer.abort();
    expect(stop.signal.aborted).toBe(false);
  });
});
