/**
 * The fidelity table (`cases.ts`) replayed against the testkit and a real control plane, outputs normalised
 * (`normalise.ts`) and compared.
 *
 * - Always: the testkit's answers against `recorded.json`, the normalised answers of the real server from the last
 *   recording run.
 * - With KUBEBUILDER_ASSETS: the same cases against a real control plane started once for this file; the testkit's
 *   answer must equal the real one, and the real one the recording (so a new Kubernetes version shows up as a
 *   failure here rather than as stale expectations). `FIDELITY_RECORD=1` rewrites `recorded.json` instead.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assetsDir } from '../../src/control-plane/assets.js';
import { CASES } from './cases.js';
import { hasKubectl, realTarget, testkitTarget, type Target } from './targets.js';

const RECORDED = join(dirname(fileURLToPath(import.meta.url)), 'recorded.json');
const recorded = (existsSync(RECORDED) ? JSON.parse(readFileSync(RECORDED, 'utf8')) : {}) as Record<string, unknown>;
const recording = process.env.FIDELITY_RECORD === '1';
const real = assetsDir() !== undefined;
const kubectl = await hasKubectl();

describe('fidelity: the testkit against the recorded answers of a real server', () => {
  let kit: Target;
  beforeAll(async () => {
    kit = await testkitTarget();
  });
  afterAll(async () => {
    await kit.stop();
  });

  for (const c of CASES) {
    it.skipIf(c.kubectl === true && !kubectl)(c.name, async () => {
      const got = await c.run(kit);
      expect(
        recorded,
        `no recorded answer for "${c.name}": run this file with KUBEBUILDER_ASSETS and FIDELITY_RECORD=1`,
      ).toHaveProperty([c.name]);
      expect(got).toEqual(recorded[c.name]);
    });
  }
});

describe.skipIf(!real)('fidelity: the testkit against a real control plane', () => {
  let kit: Target;
  let cluster: Target;
  const answers: Record<string, unknown> = {};
  beforeAll(async () => {
    [kit, cluster] = await Promise.all([testkitTarget(), realTarget()]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([kit?.stop(), cluster?.stop()]);
    if (recording) {
      const merged = { ...recorded, ...answers };
      const ordered = Object.fromEntries(CASES.filter((c) => c.name in merged).map((c) => [c.name, merged[c.name]]));
      writeFileSync(RECORDED, `${JSON.stringify(ordered, null, 2)}\n`);
    }
  }, 60_000);

  for (const c of CASES) {
    it.skipIf(c.kubectl === true && !kubectl)(c.name, async () => {
      const fromKit = await c.run(kit);
      const fromCluster = await c.run(cluster);
      answers[c.name] = fromCluster;
      expect(fromKit).toEqual(fromCluster);
      if (!recording) expect(fromCluster).toEqual(recorded[c.name]);
    });
  }
});
