/** chmod modes applied in-process: octal and symbolic, as chmod applies them to a directory. */
import { describe, expect, it } from 'vitest';
import { applyFileMode, FileModeError } from '../../src/executor/node/file-mode.js';

describe('applyFileMode', () => {
  it.each([
    [0o777, '0750', 0o750],
    [0o777, '755', 0o755],
    [0o777, '2775', 0o2775],
    [0o777, 'u=rwx,g=rx,o=', 0o750],
    [0o777, 'go-w', 0o755],
    [0o700, 'a+X', 0o711],
    [0o750, 'o=g', 0o755],
    [0o755, 'u+s', 0o4755],
    [0o777, '+t', 0o1777],
    [0o700, '+r', 0o744],
    [0o700, '=rx', 0o555],
  ])('%o with %j gives %o', (mode, spec, want) => {
    expect(applyFileMode(mode, spec, true)).toBe(want);
  });

  it('X adds x to a file only when some x is set', () => {
    expect(applyFileMode(0o644, 'a+X', false)).toBe(0o644);
    expect(applyFileMode(0o744, 'a+X', false)).toBe(0o755);
  });

  it('refuses what chmod refuses', () => {
    expect(() => applyFileMode(0o777, 'u=rwz', true)).toThrow(FileModeError);
    expect(() => applyFileMode(0o777, 'x+r', true)).toThrow(FileModeError);
  });
});
