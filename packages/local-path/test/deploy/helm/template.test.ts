// Go text/template semantics of the test renderer, on small templates whose Go output is known.
import { describe, expect, it } from 'vitest';
import { TemplateError } from './errors.js';
import { run } from './run.js';

describe('text and actions', () => {
  it('{{- and -}} trim all adjacent whitespace, newlines included; a lone minus sign is a number', () => {
    expect(run('a  \n {{- 1 -}} \n\t b')).toBe('a1b');
    expect(run('a {{ 1 }} b')).toBe('a 1 b');
    expect(run('a{{ -3 }}b')).toBe('a-3b');
    expect(run('x:\n  {{- "y" | printf " %s" }}\n')).toBe('x: y\n');
  });

  it('comments print nothing, and trim like actions', () => {
    expect(run('a {{/* note */}} b')).toBe('a  b');
    expect(run('a\n{{- /* note\nspanning lines */ -}}\nb')).toBe('ab');
  });

  it('string, raw string, char, bool and number constants; floats print as Go does', () => {
    expect(run('{{ "a\\tb" }}|{{ `raw\\n` }}|{{ \'a\' }}|{{ true }}|{{ 1.5 }}|{{ 0x10 }}')).toBe(
      'a\tb|raw\\n|97|true|1.5|16',
    );
    expect(run('{{ .big }} {{ .port }} {{ .small }}', { big: 1000000, port: 8080, small: 0.00001 })).toBe(
      '1e+06 8080 1e-05',
    );
  });

  it('a missing map key is nil: plain text/template prints "<no value>", reading a field of it fails', () => {
    expect(run('[{{ .missing }}]', {})).toBe('[<no value>]');
    expect(() => run('{{ .missing.deeper }}', {})).toThrow(/t\.yaml:1: nil pointer evaluating interface \{\}\.deeper/);
    expect(() => run('{{ .s.x }}', { s: 'text' })).toThrow(/can't evaluate field x in type string/);
  });

  it("maps and lists print as fmt's %v", () => {
    expect(run('{{ . }}', { b: [1, 'x'], a: true })).toBe('map[a:true b:[1 x]]');
  });
});

describe('control structures', () => {
  it('if / else if / else with Go truthiness: empty string, 0, false, nil and empty collections are false', () => {
    const t = '{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}';
    for (const empty of ['', 0, false, null, [], {}])
      expect(run(t, { a: empty, b: empty }), JSON.stringify(empty)).toBe('C');
    expect(run(t, { a: 'x' })).toBe('A');
    expect(run(t, { b: [0] })).toBe('B');
  });

  it('with sets dot when the value is non-empty, else runs its else branch with the outer dot', () => {
    const t = '{{ with .a }}[{{ .b }}]{{ else }}none:{{ .c }}{{ end }}';
    expect(run(t, { a: { b: 'x' } })).toBe('[x]');
    expect(run(t, { a: {}, c: 'outer' })).toBe('none:outer');
  });

  it('range over a map goes in sorted key order, with $key, $value and dot', () => {
    const t = '{{ range $k, $v := . }}{{ $k }}={{ $v }}/{{ . }};{{ end }}';
    expect(run(t, { b: 2, c: 3, a: 1 })).toBe('a=1/1;b=2/2;c=3/3;');
  });

  it('range over a list: index and element, or the element alone; else when empty', () => {
    expect(run('{{ range $i, $x := . }}{{ $i }}:{{ $x }} {{ end }}', ['a', 'b'])).toBe('0:a 1:b ');
    expect(run('{{ range $x := . }}{{ $x }}{{ end }}', ['a', 'b'])).toBe('ab');
    expect(run('{{ range . }}x{{ else }}empty{{ end }}', [])).toBe('empty');
    expect(run('{{ range .none }}x{{ else }}empty{{ end }}', {})).toBe('empty');
  });

  it('$ is the data of the template run, also inside range and with', () => {
    expect(run('{{ range .items }}{{ $.prefix }}{{ . }} {{ end }}', { prefix: '-', items: ['a', 'b'] })).toBe('-a -b ');
  });

  it('variables: := declares in the current block, = assigns the outer one, and they end with their block', () => {
    expect(run('{{ $x := "a" }}{{ if true }}{{ $x = "b" }}{{ $y := "c" }}{{ end }}{{ $x }}')).toBe('b');
    expect(() => run('{{ if true }}{{ $y := "c" }}{{ end }}{{ $y }}')).toThrow(/undefined variable: \$y/);
  });

  it('define, template and include, with a dict as dot', () => {
    const defs = '{{- define "pair" -}}{{ .a }}-{{ .b }}{{- end -}}';
    expect(run(`${defs}[{{ include "pair" (dict "a" 1 "b" "two") }}]`)).toBe('[1-two]');
    expect(run(`${defs}[{{ template "pair" . }}]`, { a: 'x', b: 'y' })).toBe('[x-y]');
    expect(() => run('{{ include "nope" . }}')).toThrow(/no template "nope"/);
  });

  it('a parenthesised pipeline, and a field of its result', () => {
    expect(run('{{ (dict "a" "b").a }} {{ printf "%s" (default "d" "") }}')).toBe('b d');
  });

  it('and/or return an argument and stop at the first that decides, as Go 1.18+', () => {
    expect(run('{{ or .a "x" }} {{ and "y" 2 }} {{ or 0 "" }}', { a: '' })).toBe('x 2 ');
    expect(run('{{ if and .a .a.b }}yes{{ else }}no{{ end }}', {})).toBe('no');
  });
});

describe('errors name the template and line', () => {
  it('an unknown function fails the parse, even in a branch never taken', () => {
    expect(() => run('a\n{{ if false }}{{ upper "x" }}{{ end }}')).toThrow(TemplateError);
    expect(() => run('a\n{{ if false }}{{ upper "x" }}{{ end }}')).toThrow(/t\.yaml:2: function "upper" not defined/);
  });

  it('constructs the renderer lacks are refused by name', () => {
    expect(() => run('{{ block "x" . }}{{ end }}')).toThrow(/\{\{block\}\} is not implemented/);
    expect(() => run('{{ range . }}{{ break }}{{ end }}', [1])).toThrow(/\{\{break\}\} is not implemented/);
  });

  it('syntax errors: unclosed action, comment and block, stray end', () => {
    expect(() => run('a {{ .x ')).toThrow(/unclosed action/);
    expect(() => run('{{/* x }}')).toThrow(/unclosed comment/);
    expect(() => run('{{ if .x }}a')).toThrow(/has no \{\{end\}\}/);
    expect(() => run('{{ end }}')).toThrow(/unexpected \{\{end\}\}/);
  });
});
