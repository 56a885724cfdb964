import { describe, expect, it } from 'vitest';
import type { ProvisionController } from '../../src/controller/controller.js';
import { controllerHealthChecks } from '../../src/controller/health.js';

/** The readiness of a controller in a given state: undefined when ready, else the check's error message. */
async function readiness(
  leaderElection: boolean,
  state: { leader: boolean; synced: boolean },
): Promise<string | undefined> {
  const controller = { isLeader: () => state.leader, hasSynced: () => state.synced, leaderHealth: () => undefined };
  const checks = controllerHealthChecks(controller as unknown as ProvisionController, leaderElection);
  try {
    await checks.readyChecks?.informers?.();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('controllerHealthChecks', () => {
  it('with leader election: a standby is ready; the leader once its informers synced', async () => {
    expect(await readiness(true, { leader: false, synced: false })).toBeUndefined();
    expect(await readiness(true, { leader: true, synced: false })).toBe('informers not synced');
    expect(await readiness(true, { leader: true, synced: true })).toBeUndefined();
    expect(controllerHealthChecks({} as ProvisionController, true).leaderCheck).toBeTypeOf('function');
  });

  it('without leader election: ready once the informers synced, and no leader check', async () => {
    expect(await readiness(false, { leader: true, synced: false })).toBe('informers not synced');
    expect(await readiness(false, { leader: true, synced: true })).toBeUndefined();
    expect(controllerHealthChecks({} as ProvisionController, false).leaderCheck).toBeUndefined();
  });
});
