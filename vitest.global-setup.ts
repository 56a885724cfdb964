/** Says once per run whether the real and node tiers run, and how to enable them when they do not. */
import { existingClusterLine, nodeTierSkippedLine, realTierSkippedLine } from './packages/testkit/src/tiers/tiers.js';

export default function setup(): void {
  for (const line of [existingClusterLine(), realTierSkippedLine(), nodeTierSkippedLine()])
    if (line !== undefined) process.stdout.write(`${line}\n`);
}
