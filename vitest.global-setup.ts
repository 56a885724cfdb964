/** Says once per run whether the real tier runs, and how to enable it when it does not. */
import { realTierSkippedLine } from './packages/testkit/src/tiers/tiers.js';

export default function setup(): void {
  const line = realTierSkippedLine();
  if (line !== undefined) process.stdout.write(`${line}\n`);
}
