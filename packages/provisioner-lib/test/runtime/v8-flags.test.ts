import { describe, expect, it } from 'vitest';
import { addV8Flags, DEFAULT_V8_FLAGS, v8FlagsToSet } from '../../src/runtime/v8-flags.js';

describe('the V8 flags the runtime sets', () => {
  it.each([
    ['plain node', [], DEFAULT_V8_FLAGS],
    ['the launcher (kprov-node) gave them', ['--optimize-for-size', '--no-turbofan'], []],
    ['an optimization tier chosen', ['--optimize-for-size', '--max-opt=2'], []],
    ['TurboFan asked for', ['--turbofan'], ['--optimize-for-size']],
    ['an optimization tier chosen, with underscores', ['--max_opt=4'], ['--optimize-for-size']],
    ['the young generation sized', ['--max-semi-space-size=64'], ['--no-turbofan']],
    ['V8 flags that decide neither', ['--expose-gc', '--stack-size=2000'], DEFAULT_V8_FLAGS],
    ['arguments that are not flags', ['', 'optimize-for-size'], DEFAULT_V8_FLAGS],
  ] as const)('%s: %j → %j', (_name, nodeArgs, expected) => {
    expect(v8FlagsToSet(DEFAULT_V8_FLAGS, nodeArgs)).toEqual(expected);
  });

  // A binary's own flags (addV8Flags), e.g. local-static's: an optimization tier chosen on the command line decides
  // the lower tiers too; the launcher's `--no-turbofan` does not.
  const INTERPRETER_ONLY = ['--no-sparkplug', '--no-maglev'];
  it.each([
    ['plain node', [], INTERPRETER_ONLY],
    ['the launcher (kprov-node) gave its flags', ['--optimize-for-size', '--no-turbofan'], INTERPRETER_ONLY],
    ['an optimization tier chosen', ['--max-opt=2'], []],
    ['no JIT at all', ['--jitless'], []],
    ['Maglev asked for', ['--maglev'], ['--no-sparkplug']],
  ] as const)("a binary's interpreter-only flags, %s: %j → %j", (_name, nodeArgs, expected) => {
    expect(v8FlagsToSet(INTERPRETER_ONLY, nodeArgs)).toEqual(expected);
  });

  it("sets none of a binary's own flags when KPROV_V8_FLAGS is set, even empty", () => {
    expect(addV8Flags(INTERPRETER_ONLY, { KPROV_V8_FLAGS: '' })).toEqual([]);
    expect(addV8Flags(INTERPRETER_ONLY, { KPROV_V8_FLAGS: '--optimize-for-size' })).toEqual([]);
  });

  it('leaves out a flag that Node.js was given with another value', () => {
    expect(v8FlagsToSet(['--max-lazy', '--no-opt'], ['--no-max-lazy'])).toEqual(['--no-opt']);
  });
});
