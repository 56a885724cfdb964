import { describe, expect, it } from 'vitest';
import { InFlightRequests } from '../../src/client/rate-limit/in-flight.js';
import { FakeClock } from '../../src/testing.js';

/** Lets every settled promise's callbacks run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('InFlightRequests', () => {
  it('without a hold, lets one Event write go at a time while PV writes are in flight, and all of them once they are through', async () => {
    const requests = new InFlightRequests({ holdMs: 0 });
    const pv1 = await requests.start('normal');
    const pv2 = await requests.start('normal');
    const started: string[] = [];
    const events = ['e1', 'e2', 'e3'].map((name) =>
      requests.start('low').then((done) => {
        started.push(name);
        return done;
      }),
    );
    await flush();
    expect(started).toEqual(['e1']);
    expect(requests.inFlight).toEqual({ normal: 2, low: 1 });

    const e1 = await events[0]!;
    e1();
    await flush();
    expect(started).toEqual(['e1', 'e2']);

    pv1();
    await flush();
    expect(started).toEqual(['e1', 'e2']);
    pv2();
    await flush();
    expect(started).toEqual(['e1', 'e2', 'e3']);
    expect(requests.inFlight).toEqual({ normal: 0, low: 2 });
  });

  it('never holds up a normal request, and counts each request out once', async () => {
    const requests = new InFlightRequests({ holdMs: 0 });
    const low = await requests.start('low');
    const other = await requests.start('low');
    const pv = await requests.start('normal');
    expect(requests.inFlight).toEqual({ normal: 1, low: 2 });
    low();
    low();
    other();
    pv();
    pv();
    expect(requests.inFlight).toEqual({ normal: 0, low: 0 });
  });

  it('drops a waiting Event write whose signal aborts, and lets the next one go', async () => {
    const requests = new InFlightRequests({ holdMs: 0 });
    const pv = await requests.start('normal');
    const first = await requests.start('low');
    const stop = new AbortController();
    const aborted = requests.start('low', stop.signal);
    const next = requests.start('low');
    stop.abort(new Error('recorder shut down'));
    await expect(aborted).rejects.toThrow('recorder shut down');
    first();
    const done = await next;
    expect(requests.inFlight).toEqual({ normal: 1, low: 1 });
    done();
    pv();
    expect(requests.inFlight).toEqual({ normal: 0, low: 0 });
  });

  it('holds Event writes while PV writes are in flight, then lets them go one at a time, oldest first', async () => {
    const clock = new FakeClock();
    const requests = new InFlightRequests({ clock, holdMs: 1000 });
    const pv = await requests.start('normal');
    const started: string[] = [];
    const start = (name: string): Promise<() => void> =>
      requests.start('low').then((done) => {
        started.push(name);
        return done;
      });
    const e1 = start('e1');
    await clock.advanceAsync(400);
    const e2 = start('e2');
    await clock.advanceAsync(599);
    await flush();
    expect(started).toEqual([]);
    expect(requests.inFlight).toEqual({ normal: 1, low: 0 });

    await clock.advanceAsync(1);
    await flush();
    expect(started).toEqual(['e1']);
    (await e1)();
    await flush();
    expect(started).toEqual(['e1']); // e2 has waited 600 ms of its 1,000
    await clock.advanceAsync(400);
    await flush();
    expect(started).toEqual(['e1', 'e2']);
    (await e2)();
    pv();
    expect(requests.inFlight).toEqual({ normal: 0, low: 0 });
  });

  it('lets held Event writes go together as soon as the PV writes are through, before the hold is over', async () => {
    const clock = new FakeClock();
    const requests = new InFlightRequests({ clock, holdMs: 1000 });
    const pv1 = await requests.start('normal');
    const pv2 = await requests.start('normal');
    const events = [requests.start('low'), requests.start('low'), requests.start('low')];
    await clock.advanceAsync(100);
    pv1();
    await flush();
    expect(requests.inFlight).toEqual({ normal: 1, low: 0 });
    pv2();
    const done = await Promise.all(events);
    expect(requests.inFlight).toEqual({ normal: 0, low: 3 });
    for (const d of done) d();
    // Nothing is left armed: the clock has no timer of the held writes.
    expect(clock.pending()).toBe(0);
  });

  it('starts an Event write at once when no PV write is in flight', async () => {
    const clock = new FakeClock();
    const requests = new InFlightRequests({ clock, holdMs: 1000 });
    const done = await requests.start('low');
    expect(requests.inFlight).toEqual({ normal: 0, low: 1 });
    done();
  });
});
