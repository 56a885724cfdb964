import { describe, expect, it } from 'vitest';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import {
  cleanPath,
  defaultFolderName,
  folderFromPattern,
  joinPath,
  renderPattern,
  volumeFolder,
  volumePath,
  PathPatternError,
  type PatternData,
} from '../../src/volume/path-pattern.js';
import { GoTemplate, GoTemplateError } from '../../src/volume/go-template.js';

const pvc: V1ObjectMeta = {
  name: 'data-web-0',
  namespace: 'team-a',
  uid: '0d1c7f7e-1111-2222-3333-444455556666',
  labels: { app: 'web', tier: 'db' },
  annotations: { 'example.com/owner': 'alice', note: 'x' },
  generation: 3,
};
const data: PatternData = { pvName: 'pvc-0d1c7f7e-1111-2222-3333-444455556666', pvc };

describe('renderPattern (Go text/template subset)', () => {
  it.each([
    ['{{ .PVC.Namespace }}/{{ .PVC.Name }}/', 'team-a/data-web-0/'],
    ['{{ .PVC.Namespace }}/{{ .PVC.Name }}', 'team-a/data-web-0'],
    ['{{.PVC.Namespace}}-{{.PVC.Name}}', 'team-a-data-web-0'],
    [
      '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ .PVName }}',
      'team-a/data-web-0/pvc-0d1c7f7e-1111-2222-3333-444455556666',
    ],
    ['{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ .PVC.Labels.app }}', 'team-a/data-web-0/web'],
    [
      '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ index .PVC.Annotations "example.com/owner" }}',
      'team-a/data-web-0/alice',
    ],
    ['{{ index .PVC.Labels `tier` }}', 'db'],
    ['{{ .PVC.UID }}', '0d1c7f7e-1111-2222-3333-444455556666'],
    ['{{ .PVC.Generation }}', '3'],
    ['{{ .PVC.Labels }}', 'map[app:web tier:db]'],
    ['{{ .PVC.Labels.missing }}', '<no value>'],
    ['{{ index .PVC.Labels "missing" }}|', '|'],
    ['a {{- .PVC.Name -}} b', 'adata-web-0b'],
    ['{{/* a comment */}}x', 'x'],
    ['{{ "literal" }}', 'literal'],
    ['plain', 'plain'],
    ['a \n {{- /* c */ -}} \n b', 'ab'],
    ['{{ index .PVC.Annotations "note" }}}}', 'x}}'],
    ['{{ "a}}b" }}', 'a}}b'],
  ])('%s → %s', (pattern, expected) => {
    expect(renderPattern('pathPattern', pattern, data)).toBe(expected);
  });

  it('renders nil maps like Go', () => {
    const bare: PatternData = { pvName: 'pvc-1', pvc: { name: 'n', namespace: 'ns' } };
    expect(renderPattern('p', '{{ .PVC.Labels.a }}|{{ index .PVC.Annotations "b" }}|{{ .PVC.Labels }}', bare)).toBe(
      '<no value>||map[]',
    );
  });

  it('fails on a missing key with missingkey=error', () => {
    expect(() => renderPattern('userPattern', '{{ .PVC.Labels.uid }}', data, 'error')).toThrow(
      'map has no entry for key "uid"',
    );
  });

  it.each([
    ['{{ if .PVC.Name }}x{{ end }}', 'unsupported template construct "if"'],
    ['{{ range .PVC.Labels }}{{ end }}', 'unsupported template construct "range"'],
    ['{{ .PVC.Name | printf "%s" }}', 'unsupported template construct "|" (pipeline'],
    ['{{ printf "%s" .PVC.Name }}', 'unsupported template function "printf"'],
    ['{{ $x := .PVC.Name }}', 'unsupported template construct "$" (variable'],
    ['{{ (.PVC.Name) }}', 'unsupported template construct "(" (parenthesized expression'],
    ['{{ index .PVC.Labels 0 }}', 'unsupported template construct "0" (number constant'],
    ['{{ true }}', 'unsupported template construct "true" (constants'],
    ['{{ template "x" }}', 'unsupported template construct "template"'],
    ['{{ .PVC.Name', 'unclosed action'],
    ['{{ }}', 'missing value for command'],
    ['{{ .PVC.Name .PVName }}', "can't give argument .PVName to non-function .PVC.Name"],
  ])('rejects %s', (pattern, message) => {
    expect(() => GoTemplate.parse('pathPattern', pattern)).toThrow(GoTemplateError);
    expect(() => GoTemplate.parse('pathPattern', pattern)).toThrow(message);
  });

  it.each([
    ['{{ .PVC.Nope }}', "can't evaluate field Nope in type v1.ObjectMeta"],
    ['{{ .Nope }}', "can't evaluate field Nope in type main.pvMetadata"],
    ['{{ .PVName.X }}', "can't evaluate field X in type string"],
    ['{{ .PVC.CreationTimestamp }}', 'field CreationTimestamp of type v1.ObjectMeta is not supported'],
    ['{{ .PVC }}', 'printing a whole v1.ObjectMeta is not supported'],
    ['{{ index .PVC "Name" }}', "can't index item of type v1.ObjectMeta"],
  ])('execution error for %s', (pattern, message) => {
    expect(() => renderPattern('pathPattern', pattern, data)).toThrow(message);
    expect(() => renderPattern('pathPattern', pattern, data)).toThrow(
      /^template: pathPattern:1: executing "pathPattern" at </,
    );
  });
});

describe('cleanPath / joinPath (Go filepath.Clean / Join)', () => {
  it.each([
    ['', '.'],
    ['a/b/', 'a/b'],
    ['a//b/./c', 'a/b/c'],
    ['a/b/../../c', 'c'],
    ['ns/name/../../otherns/x', 'otherns/x'],
    ['../a', '../a'],
    ['a/../..', '..'],
    ['/../a', '/a'],
    ['/', '/'],
    ['//a/', '/a'],
  ])('clean(%j) = %j', (input, expected) => {
    expect(cleanPath(input)).toBe(expected);
  });

  it('joins and cleans', () => {
    expect(joinPath('/opt/lpp', 'ns/name/')).toBe('/opt/lpp/ns/name');
    expect(joinPath('', '')).toBe('');
    expect(volumePath('/opt/local-path-provisioner', '/opt/../x/../etc/')).toBe('/opt/local-path-provisioner/etc');
  });
});

describe('folder names', () => {
  it('uses <pv>_<ns>_<pvc> without a pattern', () => {
    expect(defaultFolderName('pvc-1', 'default', 'local-path-pvc')).toBe('pvc-1_default_local-path-pvc');
    expect(volumeFolder(data)).toBe('pvc-0d1c7f7e-1111-2222-3333-444455556666_team-a_data-web-0');
  });

  it('accepts the README pattern and returns the cleaned folder', () => {
    expect(folderFromPattern('{{ .PVC.Namespace }}/{{ .PVC.Name }}/', data, false)).toBe('team-a/data-web-0');
    expect(volumeFolder({ ...data, pathPattern: '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ .PVC.Labels.app }}' })).toBe(
      'team-a/data-web-0/web',
    );
  });

  it.each([
    '{{ .PVC.Namespace }}/{{ .PVC.Name }}',
    '{{ .PVC.Namespace }}-{{ .PVC.Name }}',
    '/{{ .PVC.Namespace }}/{{ .PVC.Name }}/',
    '',
  ])('rejects %j without the <ns>/<name>/ prefix, as upstream', (pattern) => {
    let rendered = '';
    try {
      rendered = renderPattern('pathPattern', pattern, data);
    } catch {
      // unreachable
    }
    expect(() => folderFromPattern(pattern, data, false)).toThrow(
      `failed to create path from pattern ${pattern}: pathPattern must start with {{ .PVC.Namespace }}/{{ .PVC.Name }}/: ${rendered}`,
    );
  });

  describe('traversal into another tenant (fixed here; upstream accepts it)', () => {
    const pattern = '{{ .PVC.Namespace }}/{{ .PVC.Name }}/{{ index .PVC.Annotations "sub" }}';
    const attacker: PatternData = {
      ...data,
      pvc: { ...pvc, name: 'name', namespace: 'ns', annotations: { sub: '../../otherns/x' } },
    };

    it('is what upstream would accept: raw prefix present, filepath.IsLocal true', () => {
      const rendered = renderPattern('pathPattern', pattern, attacker);
      expect(rendered).toBe('ns/name/../../otherns/x');
      expect(rendered.startsWith('ns/name/')).toBe(true);
      const cleaned = cleanPath(rendered);
      expect(cleaned).toBe('otherns/x');
      expect(cleaned === '..' || cleaned.startsWith('../')).toBe(false);
    });

    it('is rejected, naming the pattern and the rendered path', () => {
      expect(() => folderFromPattern(pattern, attacker, false)).toThrow(PathPatternError);
      expect(() => folderFromPattern(pattern, attacker, false)).toThrow(
        `failed to create path from pattern ${pattern}: folder path contains invalid references: ns/name/../../otherns/x`,
      );
      try {
        folderFromPattern(pattern, attacker, false);
      } catch (err) {
        expect((err as PathPatternError).rendered).toBe('ns/name/../../otherns/x');
        expect((err as PathPatternError).pattern).toBe(pattern);
      }
    });

    it.each(['ns/name/..', 'ns/name/a/../..', 'ns/name/a/..', 'ns/name/../name/x'])(
      'rejects any .. element (%s)',
      (sub) => {
        const p: PatternData = { ...data, pvc: { name: 'name', namespace: 'ns', annotations: { s: sub } } };
        expect(() => folderFromPattern('{{ index .PVC.Annotations "s" }}', p, false)).toThrow(
          'folder path contains invalid references',
        );
      },
    );

    it('allows it only with allowUnsafePathPattern', () => {
      expect(folderFromPattern(pattern, attacker, true)).toBe('ns/name/../../otherns/x');
      expect(volumeFolder({ ...attacker, pathPattern: '{{ .PVC.Name }}', allowUnsafePathPattern: true })).toBe('name');
    });
  });

  it('wraps template errors with the pattern', () => {
    expect(() => folderFromPattern('{{ .PVC.Nope }}/', data, false)).toThrow(
      /^failed to create path from pattern \{\{ \.PVC\.Nope \}\}\/: template: pathPattern:1: executing/,
    );
    expect(() => folderFromPattern('{{ if 1 }}', data, true)).toThrow('unsupported template construct "if"');
  });
});
