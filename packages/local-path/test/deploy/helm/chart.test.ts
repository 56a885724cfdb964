// Helm's rules around the templates: values coalescing, built-in objects, "<no value>" blanking, partials, NOTES.txt
// and splitting the output into documents.
import { describe, expect, it } from 'vitest';
import { coalesceValues } from './values.js';
import { renderInline } from './run.js';

describe('values', () => {
  it('user values merge into maps, replace lists and scalars, and null deletes a default', () => {
    const defaults = { a: { b: 1, c: [1, 2], d: 'x' }, e: 'keep', f: 'drop' };
    expect(coalesceValues(defaults, { a: { b: 2, c: [3] }, f: null, g: null })).toEqual({
      a: { b: 2, c: [3], d: 'x' },
      e: 'keep',
      g: null,
    });
    expect(defaults.a.b, 'defaults unchanged').toBe(1);
  });

  it('a missing value renders empty (Helm blanks "<no value>"), while a field of it is an error', () => {
    expect(renderInline({ 'a.yaml': 'k: "[{{ .Values.missing }}]"' }).objects[0]?.object).toEqual({ k: '[]' });
    expect(() => renderInline({ 'a.yaml': 'k: {{ .Values.missing.deeper }}' })).toThrow(
      /demo\/templates\/a\.yaml:1: nil pointer evaluating/,
    );
  });
});

describe('built-in objects', () => {
  it('.Release, .Chart (from Chart.yaml) and .Template', () => {
    const r = renderInline({
      'a.yaml':
        'k: "{{ .Release.Name }} {{ .Release.Namespace }} {{ .Release.Service }} {{ .Chart.Name }} {{ .Chart.Version }} {{ .Chart.AppVersion }} {{ .Template.Name }}"',
    });
    expect(r.objects[0]?.object.k).toBe('rel ns Helm demo 1.2.3 1.0 demo/templates/a.yaml');
  });

  it('a field chart.Metadata lacks, and .Files or .Capabilities, fail by name', () => {
    expect(() => renderInline({ 'a.yaml': '{{ .Chart.Nope }}' })).toThrow(
      /can't evaluate field Nope in type \*chart\.Metadata/,
    );
    expect(() => renderInline({ 'a.yaml': '{{ .Files.Get "x" }}' })).toThrow(/\.Files\.Get is not implemented/);
    expect(() => renderInline({ 'a.yaml': '{{ .Capabilities.KubeVersion.Version }}' })).toThrow(
      /\.Capabilities\.KubeVersion is not implemented/,
    );
  });
});

describe('files and documents', () => {
  it('partials define templates for every file but render nothing; NOTES.txt is apart', () => {
    const r = renderInline({
      '_h.tpl': '{{ define "n" }}from-partial{{ end }}junk',
      'a.yaml': 'k: {{ include "n" . }}',
      'NOTES.txt': 'Hi {{ .Release.Name }}',
    });
    expect([...r.files.keys()]).toEqual(['demo/templates/NOTES.txt', 'demo/templates/a.yaml']);
    expect(r.objects.map((o) => o.object)).toEqual([{ k: 'from-partial' }]);
    expect(r.notes).toBe('Hi rel');
  });

  it('splits at --- lines and drops documents of only whitespace or comments', () => {
    const r = renderInline({
      'a.yaml': '---\na: 1\n---\n# just a comment\n---\n\n---\nb: 2\n',
      'b.yaml': '{{ if false }}c: 3{{ end }}',
    });
    expect(r.objects.map((o) => [o.source, o.object])).toEqual([
      ['demo/templates/a.yaml', { a: 1 }],
      ['demo/templates/a.yaml', { b: 2 }],
    ]);
  });

  it('a rendered document that is not YAML fails with its source and text', () => {
    expect(() => renderInline({ 'a.yaml': 'a: [1\n' })).toThrow(
      /demo\/templates\/a\.yaml document 1:[\s\S]*rendered:\na: \[1/,
    );
  });
});
