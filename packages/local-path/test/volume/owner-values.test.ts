/** Which rendered `VOL_PERM`, `VOL_USER` and `VOL_GROUP` values {@link resolveVolume} lets through to the helper pod. */
import { describe, expect, it } from 'vitest';
import { ParameterError, resolveVolume } from '../../src/volume/parameters.js';

function resolve(parameters: Record<string, string>): ReturnType<typeof resolveVolume> {
  return resolveVolume({ parameters, pvName: 'pvc-1', pvc: { name: 'data', namespace: 'default' } });
}

describe('rendered owner values', () => {
  it.each(['0750', '755', '2775', '0', 'u=rwx,g=rx,o=', 'a+X', 'go-w', 'u+s', 'g=u', '+t'])(
    'passes the chmod mode %j',
    (perm) => {
      expect(resolve({ permPattern: perm }).perm).toBe(perm);
    },
  );

  it.each(['0758', '07777', 'rwx', '0o750', 'u=rwx g=rx', 'u=rwz', 'x+r'])(
    'refuses %j as a mode, naming permPattern and the value',
    (perm) => {
      expect(() => resolve({ permPattern: perm })).toThrow(ParameterError);
      expect(() => resolve({ permPattern: perm })).toThrow(
        `permPattern rendered "${perm}", which is not a mode chmod accepts`,
      );
    },
  );

  it.each(['1000', 'nobody', 'local-path_user.1', ''])('passes the user and group %j', (owner) => {
    expect(resolve({ userPattern: owner, groupPattern: owner })).toMatchObject({ user: owner, group: owner });
  });

  it.each([
    ['userPattern', 'user', '1000 2000'],
    ['groupPattern', 'group', 'staff:wheel'],
    ['userPattern', 'user', 'a\tb'],
  ])('refuses %s rendering %j', (key, kind, value) => {
    expect(() => resolve({ [key]: value })).toThrow(
      `failed to create ${kind} from pattern ${value}: ${key} rendered "${value}"`,
    );
  });

  it('trims the rendered value before checking it, as upstream trims it', () => {
    expect(resolve({ permPattern: ' 0700\n', userPattern: '\t1000 ' })).toMatchObject({ perm: '0700', user: '1000' });
  });
});
