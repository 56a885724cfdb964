/** Says once per run whether the real and node tiers run, and how to enable them when they do not. */
import { nodeTierSkippedLine, realTierSkippedLine } from './packages/testkit/src/tiers/tiers.js';

export default function setup(): void {
  for (const line of [realTierSkippedLine(), nodeTierSkippedLine()])
    if (line !== undefined) process.stdout.write(`${line}\n`);
}
