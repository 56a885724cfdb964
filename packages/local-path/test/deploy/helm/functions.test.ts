// The sprig and Helm functions of the test renderer, with the outputs Helm gives.
import { describe, expect, it } from 'vitest';
import { run } from './run.js';

describe('sprig', () => {
  it('default replaces nil, "", 0, false and empty collections, and keeps anything else', () => {
    const t = '{{ .v | default "d" }}';
    for (const empty of [undefined, null, '', 0, false, [], {}])
      expect(run(t, { v: empty }), JSON.stringify(empty)).toBe('d');
    expect(run(t, { v: 'x' })).toBe('x');
    expect(run(t, { v: true })).toBe('true');
  });

  it('quote uses Go escapes, formats numbers with %v and skips nil', () => {
    expect(run('{{ quote .s }} {{ .n | quote }} [{{ .missing | quote }}]', { s: 'a"b\\c\n', n: 8080 })).toBe(
      '"a\\"b\\\\c\\n" "8080" []',
    );
  });

  it('indent and nindent indent every line; nindent starts with a newline', () => {
    expect(run('{{ "a\\nb" | indent 2 }}|{{ "a\\nb" | nindent 4 }}')).toBe('  a\n  b|\n    a\n    b');
  });

  it('trunc (negative: from the end), trimSuffix, replace, contains', () => {
    expect(run('{{ "abcdef" | trunc 3 }} {{ trunc -2 "abcdef" }} {{ trunc 10 "ab" }}')).toBe('abc ef ab');
    expect(run('{{ "a-b-" | trimSuffix "-" }} {{ "1+2+3" | replace "+" "_" }} {{ contains "lo" "hello" }}')).toBe(
      'a-b 1_2_3 true',
    );
  });

  it('an int parameter refuses a float64 from values, as Go does', () => {
    expect(() => run('{{ trunc .n "abc" }}', { n: 2 })).toThrow(
      /error calling trunc: wrong type for value; expected int; got float64/,
    );
  });

  it("printf: %s %d %v %q %%, and Go's marks for a wrong or missing argument", () => {
    expect(run('{{ printf "%s-%d-%v-%q-%%" "a" 3 .f "q" }}', { f: 1.5 })).toBe('a-3-1.5-"q"-%');
    expect(run('{{ printf "%d %s" .n }}', { n: 3 })).toBe('%!d(float64=3) %!s(MISSING)');
    expect(run('{{ printf "%s:%s" .u .p }}', {})).toBe('%!s(<nil>):%!s(<nil>)');
    expect(() => run('{{ printf "%5s" "a" }}')).toThrow(/not implemented/);
  });

  it('dict and set build maps; keys | sortAlpha | join lists them', () => {
    expect(run('{{ $d := dict "b" 1 }}{{ $_ := set $d "a" 2 }}{{ keys $d | sortAlpha | join "," }} {{ $d }}')).toBe(
      'a,b map[a:2 b:1]',
    );
  });

  it('b64enc, toJson (keys sorted, HTML escaped) and toPrettyJson', () => {
    expect(run('{{ "user:pass" | b64enc }}')).toBe('dXNlcjpwYXNz');
    expect(run('{{ toJson . }}', { b: '<&>', a: [1, 0.5, null] })).toBe(
      '{"a":[1,0.5,null],"b":"\\u003c\\u0026\\u003e"}',
    );
    expect(run('{{ toPrettyJson . }}', { a: { b: [] } })).toBe('{\n  "a": {\n    "b": []\n  }\n}');
  });
});

describe('toYaml, as sigs.k8s.io/yaml writes it', () => {
  const yaml = (v: unknown): string => run('{{ toYaml . }}', v);

  it('block style, 2 spaces, lists under a key not indented, no final newline', () => {
    expect(yaml({ b: [1, 'x', { c: true, d: null }], a: { e: 0.5 } })).toBe(
      'a:\n  e: 0.5\nb:\n- 1\n- x\n- c: true\n  d: null',
    );
    expect(yaml([['a', 'b'], []])).toBe('- - a\n  - b\n- []');
    expect(yaml({ e: {}, f: [] })).toBe('e: {}\nf: []');
  });

  it("keys in go-yaml's order: digit runs as numbers, non-letters before letters", () => {
    expect(yaml({ b: 1, a10: 1, a9: 1, B: 1, _x: 1 })).toBe('_x: 1\nB: 1\na9: 1\na10: 1\nb: 1');
  });

  it('quotes strings that would read back as something else or start with an indicator', () => {
    expect(
      yaml({
        a: 'true',
        b: '8080',
        c: '',
        d: 'a: b',
        e: '*x',
        f: 'yes',
        g: '1.5',
        h: 'plain text',
        i: '2024-01-02',
        j: 'tab\there',
      }),
    ).toBe(
      'a: "true"\nb: "8080"\nc: ""\nd: \'a: b\'\ne: \'*x\'\nf: "yes"\ng: "1.5"\nh: plain text\ni: "2024-01-02"\nj: "tab\\there"',
    );
  });

  it('multi-line strings as literal blocks, with the chomping their last newline needs', () => {
    expect(yaml({ s: 'a\nb' })).toBe('s: |-\n  a\n  b');
    expect(yaml({ s: 'a\n\nb\n' })).toBe('s: |\n  a\n\n  b');
    expect(yaml({ l: [' lead\nx'] })).toBe('l:\n- |2-\n   lead\n  x');
  });

  it("whole numbers as integers (JSON does not keep float64 1.0), other floats in Go's form", () => {
    expect(yaml({ m: 1000000, f: 1.5e-7 })).toBe('f: 1.5e-07\nm: 1000000');
  });

  it('quotes keys too: y and n are booleans to go-yaml v2', () => {
    expect(yaml({ n: 1, y: 2, x: 3 })).toBe('"n": 1\nx: 3\n"y": 2');
  });

  it('refuses a long string with spaces, which go-yaml would fold at 80 columns', () => {
    expect(() => yaml({ s: 'word '.repeat(20) })).toThrow(/folds it/);
  });

  it('toYaml | nindent: the usual way to put a map under a key', () => {
    expect(run('spec:\n  x:\n    {{- toYaml .r | nindent 4 }}', { r: { limits: { cpu: '100m' } } })).toBe(
      'spec:\n  x:\n    limits:\n      cpu: 100m',
    );
  });
});
