import { describe, expect, it } from 'vitest';
import { InFlightRequests } from '../../src/client/rate-limit/in-flight.js';

/** Lets every settled promise's callbacks run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('InFlightRequests', () => {
  it('lets one Event write go at a time while PV writes are in flight, and all of them once they are through', async () => {
    const requests = new InFlightRequests();
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
    const requests = new InFlightRequests();
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
    const requests = new InFlightRequests();
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
});
