/** checkTeardownTarget and checkVolumePathText: the rules, one by one. */
import { describe, expect, it } from 'vitest';
import { checkTeardownTarget, TeardownRefusedError, type TeardownTarget } from '../../src/volume/teardown-guard.js';
import { checkVolumePathText, VolumePathError } from '../../src/volume/path-safety.js';

const PV = 'pvc-11111111-2222-3333-4444-555555555555';
const base: TeardownTarget = {
  pvName: PV,
  path: `/opt/lpp/${PV}_default_data`,
  basePaths: ['/opt/lpp', '/mnt/disk2'],
  claim: { namespace: 'default', name: 'data', uid: 'u1' },
  otherVolumes: [],
};

function refused(target: TeardownTarget): string {
  try {
    checkTeardownTarget(target);
  } catch (err) {
    expect(err).toBeInstanceOf(TeardownRefusedError);
    return (err as Error).message;
  }
  throw new Error('not refused');
}

describe('checkTeardownTarget', () => {
  it('accepts the default folder under any base path of the node, and returns that base path', () => {
    expect(checkTeardownTarget(base)).toBe('/opt/lpp');
    expect(checkTeardownTarget({ ...base, path: `/mnt/disk2/${PV}_default_data` })).toBe('/mnt/disk2');
  });

  it.each([
    ['a base path itself', '/opt/lpp', 'it is a base path of the config'],
    ['a path outside every base path', '/etc', 'not inside a base path configured for this node and class'],
    ['a sibling of a base path sharing its prefix', `/opt/lpp2/${PV}_default_data`, 'not inside a base path'],
    ['an unclean path', `/opt/lpp/x/../${PV}_default_data`, 'not a clean absolute path'],
    ['a relative path', `opt/lpp/${PV}_default_data`, 'not a clean absolute path'],
    ['a control character', `/opt/lpp/${PV}_default_data\n`, 'control character'],
    ["another claim's folder", `/opt/lpp/${PV}_default_other`, 'not the directory this provisioner makes'],
    ["another PV's folder", '/opt/lpp/pvc-9_default_data', 'not the directory this provisioner makes'],
    ['a folder one level deeper', `/opt/lpp/${PV}_default_data/x`, 'not the directory this provisioner makes'],
  ])('refuses %s', (_what, path, why) => {
    const message = refused({ ...base, path });
    expect(message).toContain(`refusing to remove ${JSON.stringify(path)} for volume ${PV}`);
    expect(message).toContain(why);
  });

  it('refuses a PV without a claim, and one whose node has no base path', () => {
    expect(refused({ ...base, claim: undefined })).toContain('names no claim');
    expect(refused({ ...base, basePaths: [] })).toContain('(none)');
  });

  it('refuses the path, or a parent of the path, of another PV', () => {
    const target = { ...base, pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/', path: '/opt/lpp/default/data' };
    expect(checkTeardownTarget(target)).toBe('/opt/lpp');
    expect(refused({ ...target, otherVolumes: [{ name: 'live', path: '/opt/lpp/default/data' }] })).toContain(
      'it holds the volume of PV live',
    );
    expect(refused({ ...target, otherVolumes: [{ name: 'live', path: '/opt/lpp/default/data/sub' }] })).toContain(
      'it holds the volume of PV live',
    );
    expect(
      checkTeardownTarget({
        ...target,
        otherVolumes: [
          { name: PV, path: '/opt/lpp/default/data' },
          { name: 'x', path: '/opt/lpp/default/database' },
        ],
      }),
    ).toBe('/opt/lpp');
  });

  it('with a safe pathPattern accepts what it can render for the claim: under <namespace>/<claim>', () => {
    const pattern = { ...base, pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ .PVC.Annotations.sub }}' };
    expect(checkTeardownTarget({ ...pattern, path: '/opt/lpp/default/data/x' })).toBe('/opt/lpp');
    expect(checkTeardownTarget({ ...pattern, path: '/opt/lpp/default/data' })).toBe('/opt/lpp');
    expect(refused({ ...pattern, path: '/opt/lpp/default/database' })).toContain('/opt/lpp/default/data[/...]');
    expect(refused({ ...pattern, path: '/opt/lpp/default' })).toContain('not the directory');
  });

  it("without the class (deleted, or no longer parsing) accepts the default folder and a safe pattern's shape", () => {
    const unknown = { ...base, classUnknown: true };
    expect(checkTeardownTarget(unknown)).toBe('/opt/lpp');
    expect(checkTeardownTarget({ ...unknown, path: '/opt/lpp/default/data' })).toBe('/opt/lpp');
    expect(checkTeardownTarget({ ...unknown, path: '/opt/lpp/default/data/2024' })).toBe('/opt/lpp');
    expect(refused({ ...base, path: '/opt/lpp/default/data' })).toContain('not the directory this provisioner makes');
    expect(refused({ ...unknown, path: '/opt/lpp/default/other' })).toContain(
      'not the directory this provisioner makes for that PV and claim (/opt/lpp/default/data[/...])',
    );
    expect(refused({ ...unknown, path: '/opt/lpp/data' })).toContain('not the directory this provisioner makes');
    expect(
      refused({
        ...unknown,
        path: '/opt/lpp/default/data',
        otherVolumes: [{ name: 'live', path: '/opt/lpp/default/data/x' }],
      }),
    ).toContain('it holds the volume of PV live');
  });

  it('with an unsafe pathPattern accepts only the pattern rendered from the PV and claim', () => {
    const pattern = { ...base, pathPattern: 'x/{{ .PVC.Name }}-{{ .PVName }}', allowUnsafePathPattern: true };
    expect(checkTeardownTarget({ ...pattern, path: `/opt/lpp/x/data-${PV}` })).toBe('/opt/lpp');
    expect(refused({ ...pattern, path: '/opt/lpp/x/other' })).toContain(
      'the StorageClass pathPattern rendered for claim default/data',
    );
    // A pattern that needs what the claim no longer has cannot be rendered: only the default folder passes.
    const annotated = { ...pattern, pathPattern: '{{ .PVC.Annotations.sub }}' };
    expect(refused({ ...annotated, path: '/opt/lpp/anything' })).toContain('not the directory');
    expect(checkTeardownTarget(annotated)).toBe('/opt/lpp');
  });
});

describe('checkVolumePathText', () => {
  const meta = {
    name: 'data',
    namespace: 'default',
    annotations: { sub: 'a\u0000b', long: 'x'.repeat(300), ok: 'fine' },
    labels: { app: 'web' },
  };

  it('accepts a plain path', () => {
    expect(() => checkVolumePathText('/opt/lpp/default/data/fine', meta)).not.toThrow();
  });

  it('refuses a control character, naming the claim field it came from', () => {
    expect(() => checkVolumePathText('/opt/lpp/default/data/a\u0000b', meta)).toThrow(VolumePathError);
    expect(() => checkVolumePathText('/opt/lpp/default/data/a\u0000b', meta)).toThrow(
      `from the claim's metadata.annotations["sub"]`,
    );
  });

  it('refuses a component longer than 255 bytes (UTF-8), naming the claim field', () => {
    expect(() => checkVolumePathText(`/opt/lpp/${'x'.repeat(300)}`, meta)).toThrow(
      `is 300 bytes long, more than the 255 a file name may have, from the claim's metadata.annotations["long"]`,
    );
    expect(() => checkVolumePathText(`/opt/lpp/${'é'.repeat(128)}`, { name: 'data' })).toThrow('is 256 bytes long');
    expect(() => checkVolumePathText(`/opt/lpp/${'x'.repeat(255)}`, { name: 'data' })).not.toThrow();
    expect(() => checkVolumePathText(`/opt/lpp/${'y'.repeat(256)}`, { name: 'data' })).toThrow(
      'from the StorageClass pathPattern or the config',
    );
  });
});
