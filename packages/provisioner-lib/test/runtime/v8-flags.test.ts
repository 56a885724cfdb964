import { describe, expect, it } from 'vitest';
import { DEFAULT_V8_FLAGS, v8FlagsToSet } from '../../src/runtime/v8-flags.js';

describe('the V8 flags the runtime sets', () => {
  it.each([
    ['plain node', [], DEFAULT_V8_FLAGS],
    ['the launcher (kprov-node) gave them', ['--optimize-for-size', '--max-opt=2'], []],
    ['TurboFan asked for', ['--turbofan'], ['--optimize-for-size']],
    ['an optimization tier chosen, with underscores', ['--max_opt=4'], ['--optimize-for-size']],
    ['the young generation sized', ['--max-semi-space-size=64'], ['--no-turbofan']],
    ['V8 flags that decide neither', ['--expose-gc', '--stack-size=2000'], DEFAULT_V8_FLAGS],
    ['arguments that are not flags', ['', 'optimize-for-size'], DEFAULT_V8_FLAGS],
  ] as const)('%s: %j → %j', (_name, nodeArgs, expected) => {
    expect(v8FlagsToSet(DEFAULT_V8_FLAGS, nodeArgs)).toEqual(expected);
  });

  it('leaves out a flag that Node.js was given with another value', () => {
    expect(v8FlagsToSet(['--max-lazy', '--no-opt'], ['--no-max-lazy'])).toEqual(['--no-opt']);
  });
});
