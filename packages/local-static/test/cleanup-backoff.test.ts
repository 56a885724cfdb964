/**
 * Failed cleanups on both tiers, on a fake clock: a volume whose cleanup keeps failing (a block cleaner that exits
 * non-zero, a filesystem mounted inside a released volume) is tried again after the discovery period, then twice
 * that, and so on, never in a loop; its Warning Event is one Event whose count says how many attempts failed; once the
 * cause is gone the volume is cleaned and published again, and its backoff starts over.
 *
 * The provisioner runs on an injected fake clock: each step moves it one discovery period and waits, in real time, for
 * the pass that falls due and for any cleanup it started, so a fake minute takes a few seconds and the count of
 * attempts in it does not depend on how busy the machine is.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { FakeClock } from '@kprov/provisioner-lib/testing';
import { describeTiers } from '@kprov/testkit/vitest';
import { expect, it, vi } from 'vitest';
import { buildConfig } from '../src/config/config.js';
import { volumeName } from '../src/discovery/volume-name.js';
import {
  bind,
  classEntry,
  HOST_DIR,
  metricValue,
  release,
  startEnv,
  storageClass,
  volumeEvents,
  WAIT,
  type Env,
  type Instance,
} from './helpers.js';
import { CAN_LOOP, CAN_MOUNT, NO_LOOP_REASON } from './mounts.js';

const NODE = 'node-1';
/** The discovery period of these tests, on the fake clock: the first wait after a failure. */
const PERIOD_MS = 1000;
/** A fake minute of passes. */
const MINUTE_STEPS = 60;
/** Attempts of a volume in a minute of 1 s passes whose cleanup always fails: at 0, 1, 3, 7, 15 and 31 s. */
const ATTEMPTS_IN_A_MINUTE = 6;
/** Real time one step may take (a pass, and the cleaner it starts), on a busy machine. */
const STEP = { timeout: 20_000, interval: 5 };

/** Moves `clock` one period on and waits for the pass that falls due and for the cleanups running to finish. */
async function step(instance: Instance, clock: FakeClock): Promise<void> {
  const target = instance.provisioner.completedPasses + 1;
  await clock.advanceAsync(PERIOD_MS);
  await vi.waitFor(() => {
    if (instance.provisioner.completedPasses < target) throw new Error('the pass has not run yet');
    if (instance.provisioner.cleanupStats().running > 0) throw new Error('a cleanup is still running');
  }, STEP);
}

/** Steps until `done` holds (at most `max` steps); returns how many it took. */
async function stepUntil(
  instance: Instance,
  clock: FakeClock,
  done: () => Promise<boolean>,
  max = 100,
): Promise<number> {
  for (let n = 0; n < max; n++) {
    if (await done()) return n;
    await step(instance, clock);
  }
  throw new Error(`not done after ${max} steps of ${PERIOD_MS} ms`);
}

/** Lines of the file `file` (0 when it does not exist). */
function lines(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** The one VolumeFailedDelete Event of PV `name` (it must be one), once its count is `count`. */
async function failedEvent(e: Env, name: string, count: number): Promise<{ message?: string; count?: number }> {
  return vi.waitFor(async () => {
    const events = await volumeEvents(e, name, 'VolumeFailedDelete');
    expect(events).toHaveLength(1);
    expect(events[0]?.count).toBe(count);
    return events[0]!;
  }, WAIT);
}

/** Whether PV `name` exists with another UID than `uid`, Available. */
async function recreated(e: Env, name: string, uid: string | undefined): Promise<boolean> {
  const pv = await e.read.volume(name);
  return pv !== undefined && pv.metadata?.uid !== uid && pv.status?.phase === 'Available';
}

describeTiers('cleanup backoff', () => {
  it.skipIf(!CAN_LOOP)(
    `backs a failing block cleaner off: ${ATTEMPTS_IN_A_MINUTE} attempts a minute, one Warning Event counting them; fixed, the device is published again and its backoff starts over (${NO_LOOP_REASON ?? 'loop devices available'})`,
    async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('raw') });
      const dir = e.onNode(NODE, HOST_DIR);
      mkdirSync(dir, { recursive: true });
      symlinkSync(e.mounts.loopDevice(8), `${dir}/dev1`);
      const runs = path.join(dir, '..', 'runs');
      const keys = (command: string): Record<string, unknown> => ({
        storageClassMap: {
          raw: classEntry(e, NODE, { volumeMode: 'Block', blockCleanerCommand: ['sh', '-c', command] }),
        },
      });
      const failing = keys(`echo run >> ${runs}; echo wiping; exit 10`);
      const clock = new FakeClock();
      const instance = await e.start(NODE, failing, { clock, discoveryPeriodMs: PERIOD_MS });
      const name = volumeName('dev1', NODE, 'raw');
      const first = await vi.waitFor(async () => {
        const pv = await e.read.volume(name);
        if (pv === undefined) throw new Error('not published yet');
        return pv;
      }, WAIT);
      await bind(e, 'c1', 'raw', name, { volumeMode: 'Block' });
      await release(e, 'c1', name);

      // From its first attempt, a fake minute: the cleaner runs after 1, 2, 4, 8 and 16 s more, not once a pass.
      await stepUntil(instance, clock, () => Promise.resolve(lines(runs) === 1));
      for (let n = 1; n < MINUTE_STEPS; n++) await step(instance, clock);
      expect(lines(runs)).toBe(ATTEMPTS_IN_A_MINUTE);
      expect((await e.read.volume(name))?.status?.phase).toBe('Released');
      const event = await failedEvent(e, name, ATTEMPTS_IN_A_MINUTE);
      expect(event.message).toBe(`Error cleaning PV "${name}": sh exited with status 10`);
      const text = await e.metrics(instance);
      expect(
        metricValue(
          text,
          'local_volume_provisioner_persistentvolume_cleanup_total{mode="Block",type="process",outcome="failed"}',
        ),
      ).toBe(ATTEMPTS_IN_A_MINUTE);
      expect(
        metricValue(text, 'local_volume_provisioner_persistentvolume_delete_failed_total{mode="Block",type="process"}'),
      ).toBe(ATTEMPTS_IN_A_MINUTE);

      // The cleaner fixed in the config: the next attempt (32 s after the last) wipes it, and it is published again.
      instance.setConfig(buildConfig(keys(`echo run >> ${runs}`)));
      await stepUntil(instance, clock, () => recreated(e, name, first.metadata?.uid));
      expect(lines(runs)).toBe(ATTEMPTS_IN_A_MINUTE + 1);
      expect(
        metricValue(
          await e.metrics(instance),
          'local_volume_provisioner_persistentvolume_cleanup_total{mode="Block",type="process",outcome="succeeded"}',
        ),
      ).toBe(1);

      // Its backoff started over: failing again, the new PV is tried again one period after its first failure.
      instance.setConfig(buildConfig(failing));
      const second = await e.read.volume(name);
      await bind(e, 'c2', 'raw', name, { volumeMode: 'Block' });
      await release(e, 'c2', name);
      await stepUntil(instance, clock, () => Promise.resolve(lines(runs) === ATTEMPTS_IN_A_MINUTE + 2));
      await step(instance, clock);
      expect(lines(runs)).toBe(ATTEMPTS_IN_A_MINUTE + 3);
      expect((await e.read.volume(name))?.metadata?.uid).toBe(second?.metadata?.uid);
    },
  );

  it.skipIf(!CAN_MOUNT)(
    'does not retry a released volume with a filesystem mounted inside in a loop, and cleans it once that is unmounted',
    async () => {
      const e = await startEnv();
      await e.storage.createStorageClass({ body: storageClass('local-storage') });
      const disk = `${e.onNode(NODE, HOST_DIR)}/disk1`;
      e.mounts.mount(disk);
      const clock = new FakeClock();
      const instance = await e.start(
        NODE,
        { storageClassMap: { 'local-storage': classEntry(e, NODE) } },
        { clock, discoveryPeriodMs: PERIOD_MS },
      );
      const name = volumeName('disk1', NODE, 'local-storage');
      const first = await vi.waitFor(async () => {
        const pv = await e.read.volume(name);
        if (pv === undefined) throw new Error('not published yet');
        return pv;
      }, WAIT);
      await bind(e, 'c1', 'local-storage', name);
      writeFileSync(`${disk}/data`, 'x');
      mkdirSync(`${disk}/inner`);
      e.mounts.mount(`${disk}/inner`, 1);
      writeFileSync(`${disk}/inner/kept`, 'another filesystem\n');
      await release(e, 'c1', name);

      const failures = async (): Promise<number> =>
        metricValue(
          await e.metrics(instance),
          'local_volume_provisioner_persistentvolume_cleanup_total{mode="Filesystem",type="process",outcome="failed"}',
        ) ?? 0;
      await stepUntil(instance, clock, async () => (await failures()) === 1);
      const passes = instance.provisioner.completedPasses;
      for (let n = 1; n < MINUTE_STEPS; n++) await step(instance, clock);
      expect(await failures()).toBe(ATTEMPTS_IN_A_MINUTE);
      // One pass a period: a failure does not start the next pass at once.
      expect(instance.provisioner.completedPasses - passes).toBe(MINUTE_STEPS - 1);
      const event = await failedEvent(e, name, ATTEMPTS_IN_A_MINUTE);
      expect(event.message).toContain(`"${disk}/inner" is another filesystem mounted inside the volume`);
      expect(readFileSync(`${disk}/inner/kept`, 'utf8')).toBe('another filesystem\n');

      e.mounts.unmount(`${disk}/inner`);
      await stepUntil(instance, clock, () => recreated(e, name, first.metadata?.uid));
      expect(existsSync(`${disk}/data`)).toBe(false);
      expect(existsSync(`${disk}/inner`)).toBe(false);
    },
  );
});
