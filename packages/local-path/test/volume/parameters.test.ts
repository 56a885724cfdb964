import { describe, expect, it } from 'vitest';
import {
  parseVolumeParameters,
  parseGoBool,
  parseVolumeType,
  resolveVolume,
  isLabelKey,
  ParameterError,
  DEFAULT_NODE_AFFINITY_KEY,
} from '../../src/volume/parameters.js';
import { PathPatternError } from '../../src/volume/path-pattern.js';

const pvc = {
  name: 'claim',
  namespace: 'ns',
  uid: 'u1',
  labels: { uid: '1000' },
  annotations: {} as Record<string, string>,
};

describe('parseVolumeParameters', () => {
  it('has upstream defaults with no parameters', () => {
    expect(parseVolumeParameters({})).toEqual({
      nodePath: undefined,
      pathPattern: undefined,
      allowUnsafePathPattern: false,
      nodeAffinityKey: DEFAULT_NODE_AFFINITY_KEY,
      userPattern: undefined,
      groupPattern: undefined,
      permPattern: undefined,
      volumeType: 'hostPath',
      warnings: [],
    });
  });

  it('ignores unknown parameters', () => {
    expect(() => parseVolumeParameters({ parameters: { foo: 'bar' } })).not.toThrow();
  });

  describe('nodePath', () => {
    it('accepts a clean absolute path, treats empty as absent', () => {
      expect(parseVolumeParameters({ parameters: { nodePath: '/data1' } }).nodePath).toBe('/data1');
      expect(parseVolumeParameters({ parameters: { nodePath: '' } }).nodePath).toBeUndefined();
    });
    it.each(['data1', '/data1/', '/a/../b', '/'])('rejects %j', (v) => {
      expect(() => parseVolumeParameters({ parameters: { nodePath: v } })).toThrow(
        `invalid StorageClass parameter nodePath "${v}"`,
      );
      expect(() => parseVolumeParameters({ parameters: { nodePath: v } })).toThrow(ParameterError);
    });
  });

  describe('pathPattern and allowUnsafePathPattern', () => {
    it('rejects a pattern that does not parse, before rendering', () => {
      expect(() => parseVolumeParameters({ parameters: { pathPattern: '{{ if }}' } })).toThrow(PathPatternError);
      expect(() => parseVolumeParameters({ parameters: { pathPattern: '{{ if }}' } })).toThrow(
        'failed to create path from pattern {{ if }}: template: pathPattern:1: unsupported template construct "if"',
      );
    });
    it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('parameter %s is true', (v) => {
      expect(
        parseVolumeParameters({ parameters: { pathPattern: 'x', allowUnsafePathPattern: v } }).allowUnsafePathPattern,
      ).toBe(true);
    });
    it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('parameter %s is false', (v) => {
      expect(
        parseVolumeParameters({ parameters: { pathPattern: 'x', allowUnsafePathPattern: v } }).allowUnsafePathPattern,
      ).toBe(false);
    });
    it('reads the annotation only when the parameter is absent', () => {
      expect(
        parseVolumeParameters({
          parameters: { pathPattern: 'x' },
          storageClassAnnotations: { allowUnsafePathPattern: 'true' },
        }).allowUnsafePathPattern,
      ).toBe(true);
      expect(
        parseVolumeParameters({
          parameters: { pathPattern: 'x', allowUnsafePathPattern: 'false' },
          storageClassAnnotations: { allowUnsafePathPattern: 'true' },
        }).allowUnsafePathPattern,
      ).toBe(false);
    });
    it('ignores the flag without pathPattern', () => {
      const p = parseVolumeParameters({ parameters: { allowUnsafePathPattern: 'yes' } });
      expect(p.allowUnsafePathPattern).toBe(false);
      expect(p.warnings).toEqual([]);
    });
    it('warns and defaults to false on an unparseable value, with upstream messages', () => {
      expect(
        parseVolumeParameters({ parameters: { pathPattern: 'x', allowUnsafePathPattern: 'yes' } }).warnings,
      ).toEqual([
        'failed to parse allowUnsafePathPattern yes, defaulting to false: strconv.ParseBool: parsing "yes": invalid syntax',
      ]);
      const a = parseVolumeParameters({
        parameters: { pathPattern: 'x' },
        storageClassAnnotations: { allowUnsafePathPattern: 'on' },
      });
      expect(a.allowUnsafePathPattern).toBe(false);
      expect(a.warnings).toEqual([
        'failed to parse allow-unsafe-path-pattern annotation on, defaulting to false: strconv.ParseBool: parsing "on": invalid syntax',
      ]);
    });
    it('parseGoBool', () => {
      expect(parseGoBool('tRUE')).toBeUndefined();
      expect(parseGoBool('')).toBeUndefined();
    });
  });

  describe('nodeAffinityKey', () => {
    it('defaults when absent or empty', () => {
      expect(parseVolumeParameters({ parameters: { nodeAffinityKey: '' } }).nodeAffinityKey).toBe(
        'kubernetes.io/hostname',
      );
      expect(
        parseVolumeParameters({ parameters: { nodeAffinityKey: 'topology.example.com/rack' } }).nodeAffinityKey,
      ).toBe('topology.example.com/rack');
    });
    it.each(['bad key', '-x', 'a/b/c', 'Example.com/x', `${'a'.repeat(64)}`, 'example.com/'])('rejects %j', (v) => {
      expect(() => parseVolumeParameters({ parameters: { nodeAffinityKey: v } })).toThrow(
        `invalid StorageClass parameter nodeAffinityKey "${v}": must be a node label key`,
      );
    });
    it('isLabelKey', () => {
      expect(isLabelKey('kubernetes.io/hostname')).toBe(true);
      expect(isLabelKey('zone')).toBe(true);
    });
  });

  describe('userPattern, groupPattern, permPattern', () => {
    it('takes the parameter, else the annotation', () => {
      const p = parseVolumeParameters({
        parameters: { userPattern: '1000' },
        storageClassAnnotations: { userPattern: 'ignored', groupPattern: '2000', permPattern: '0750' },
      });
      expect([p.userPattern, p.groupPattern, p.permPattern]).toEqual(['1000', '2000', '0750']);
    });
    it.each([
      ['userPattern', 'user'],
      ['groupPattern', 'group'],
      ['permPattern', 'perm'],
    ])('rejects a %s that does not parse', (key, kind) => {
      expect(() => parseVolumeParameters({ parameters: { [key]: '{{ .X | y }}' } })).toThrow(
        `failed to create ${kind} from pattern {{ .X | y }}: template: ${key}:1:`,
      );
      expect(() => parseVolumeParameters({ storageClassAnnotations: { [key]: '{{' } })).toThrow(ParameterError);
    });
  });

  describe('volume type', () => {
    it('PVC annotation overrides the class annotation; case-insensitive; normalised', () => {
      expect(parseVolumeParameters({ storageClassAnnotations: { defaultVolumeType: 'local' } }).volumeType).toBe(
        'local',
      );
      expect(
        parseVolumeParameters({
          storageClassAnnotations: { defaultVolumeType: 'local' },
          pvcAnnotations: { volumeType: 'HOSTPATH' },
        }).volumeType,
      ).toBe('hostPath');
      expect(parseVolumeParameters({ pvcAnnotations: { volumeType: 'Local' } }).volumeType).toBe('local');
    });
    it('a defaultVolumeType parameter is not read (it is an annotation)', () => {
      expect(parseVolumeParameters({ parameters: { defaultVolumeType: 'local' } }).volumeType).toBe('hostPath');
    });
    it.each([
      [{ pvcAnnotations: { volumeType: 'nfs' } }, 'nfs', 'volumeType'],
      [{ pvcAnnotations: { volumeType: '' } }, '', 'volumeType'],
      [{ storageClassAnnotations: { defaultVolumeType: 'block' } }, 'block', 'defaultVolumeType'],
    ])('rejects %j with upstream message, naming the key', (sources, value, key) => {
      expect(() => parseVolumeParameters(sources)).toThrow(
        `failed to create persistent volume source: "${value}" is not a recognised volume type`,
      );
      try {
        parseVolumeParameters(sources);
      } catch (err) {
        expect((err as ParameterError).key).toBe(key);
        expect((err as ParameterError).allowed).toContain('"local" or "hostPath"');
      }
    });
    it('parseVolumeType', () => {
      expect(parseVolumeType('hostPath')).toBe('hostPath');
    });
  });
});

describe('resolveVolume', () => {
  it('resolves folder and owner patterns (missingkey=error, trimmed)', () => {
    const r = resolveVolume({
      pvName: 'pvc-u1',
      pvc,
      parameters: {
        pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/',
        userPattern: ' {{ .PVC.Labels.uid }}\n',
        permPattern: '0770',
      },
    });
    expect(r.folder).toBe('ns/claim');
    expect([r.user, r.group, r.perm]).toEqual(['1000', '', '0770']);
  });

  it('uses the default folder name', () => {
    expect(resolveVolume({ pvName: 'pvc-u1', pvc }).folder).toBe('pvc-u1_ns_claim');
  });

  it('fails on a missing key in an owner pattern', () => {
    expect(() =>
      resolveVolume({ pvName: 'pvc-u1', pvc, parameters: { groupPattern: '{{ .PVC.Labels.gid }}' } }),
    ).toThrow(
      'failed to create group from pattern {{ .PVC.Labels.gid }}: template: groupPattern:1: executing "groupPattern" at <.PVC.Labels.gid>: map has no entry for key "gid"',
    );
  });

  it('fails on a bad volumeType before anything else is resolved', () => {
    expect(() => resolveVolume({ pvName: 'pvc-u1', pvc: { ...pvc, annotations: { volumeType: 'nfs' } } })).toThrow(
      'is not a recognised volume type',
    );
  });

  it('fails on a traversal pattern', () => {
    expect(() =>
      resolveVolume({
        pvName: 'pvc-u1',
        pvc: { ...pvc, name: 'name', annotations: { sub: '../../victim/x' } },
        parameters: { pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ index .PVC.Annotations "sub" }}' },
      }),
    ).toThrow('folder path contains invalid references: ns/name/../../victim/x');
  });
});
