import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { logThrottledRequests } from '../../src/client/rate-limit/throttle-log.js';
import { goDuration, throttleMessage } from '../../src/client/rate-limit/throttle-message.js';
import { captureLogger } from '../events/capture-logger.js';

const URL = 'https://10.0.0.1:443/api/v1/persistentvolumes';

function wait(waitedMs: number) {
  return { waitedMs, verb: 'POST', url: URL, message: throttleMessage(waitedMs, 'POST', URL) };
}

describe('throttleMessage', () => {
  it("is client-go's line, with the wait printed as a Go duration", () => {
    expect(throttleMessage(1234.5678, 'POST', URL)).toBe(
      `Waited for 1.2345678s due to client-side throttling, not priority and fairness, request: POST:${URL}`,
    );
  });

  it.each([
    [0, '0s'],
    [0.0005, '500ns'],
    [0.25, '250µs'],
    [75, '75ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [90_000, '1m30s'],
    [7_200_500, '2h0m0.5s'],
  ])('prints %d ms as %s', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });
});

describe('logThrottledRequests', () => {
  it('logs waits over 1 s at info, at most once per 10 s, and waits over 50 ms at debug', () => {
    const clock = new FakeClock();
    const logger = captureLogger();
    const hook = logThrottledRequests(logger, { clock });
    hook(wait(50)); // not long enough for anything
    hook(wait(51));
    hook(wait(1001));
    clock.advance(9_999);
    hook(wait(2000)); // within 10 s of the last info line: debug only
    clock.advance(1);
    hook(wait(3000));
    expect(logger.lines.map((l) => [l.level, l.message])).toEqual([
      ['debug', throttleMessage(51, 'POST', URL)],
      ['info', throttleMessage(1001, 'POST', URL)],
      ['debug', throttleMessage(2000, 'POST', URL)],
      ['info', throttleMessage(3000, 'POST', URL)],
    ]);
  });
});
