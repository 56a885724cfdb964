// text/template's syntax as text-template.ts reads it: items of the lexer, trees of the parser, and errors that name
// the template and line. What a pathPattern may use of it is go-template.ts's (path-pattern.test.ts).
import { describe, expect, it } from 'vitest';
import { lex, parseTemplate, TemplateError, type Node } from '../../src/volume/text-template.js';

const unquote = (quoted: string): string => JSON.parse(quoted) as string;
const parse = (text: string): Node[] => parseTemplate('t', text, { unquote }).root;
const texts = (text: string): string[] =>
  lex('t', text, { unquote }).map((item) => (item.kind === 'text' ? item.text : item.source));

describe('lex', () => {
  it('{{- and -}} trim all adjacent whitespace, newlines included; a lone minus sign starts a number', () => {
    expect(texts('a  \n {{- 1 -}} \n\t b')).toEqual(['a', '{{- 1 -}}', 'b']);
    expect(texts('a {{ 1 }} b')).toEqual(['a ', '{{ 1 }}', ' b']);
    const [, action] = lex('t', 'a{{ -3 }}b', { unquote });
    expect(action).toMatchObject({ kind: 'action', tokens: [{ kind: 'number', text: '-3' }] });
  });

  it('comments leave nothing, and trim like actions', () => {
    expect(texts('a {{/* note */}} b')).toEqual(['a ', ' b']);
    expect(texts('a\n{{- /* note\nspanning lines */ -}}\nb')).toEqual(['a', 'b']);
  });

  it('string, raw string, char, bool, nil and number constants; strings read by the caller’s unquote', () => {
    const [item] = lex('t', '{{ "a\\tb" `raw\\n` \'a\' true nil 1.5 0x10 }}', { unquote });
    expect(item).toMatchObject({
      kind: 'action',
      tokens: [
        { kind: 'string', value: 'a\tb', source: '"a\\tb"' },
        { kind: 'string', value: 'raw\\n', source: '`raw\\n`' },
        { kind: 'char', value: 97 },
        { kind: 'bool', value: true },
        { kind: 'nil' },
        { kind: 'number', text: '1.5' },
        { kind: 'number', text: '0x10' },
      ],
    });
    expect(() => lex('t', '{{ "\\x41" }}', { unquote })).toThrow(/^template: t:1: /);
  });

  it('fields, variables, functions and punctuation, each knowing whether a space came before it', () => {
    const [item] = lex('t', '{{ $x := index .PVC.Labels "a" | f (.A) }}', { unquote });
    expect(item?.kind === 'action' && item.tokens.map((t) => [t.kind, t.spaceBefore])).toEqual([
      ['variable', true],
      ['punct', true],
      ['identifier', true],
      ['field', true],
      ['field', false],
      ['string', true],
      ['punct', true],
      ['identifier', true],
      ['punct', true],
      ['field', false],
      ['punct', false],
    ]);
  });
});

describe('parseTemplate', () => {
  it('actions: a pipeline of commands, with field chains, declarations and parenthesised pipelines', () => {
    expect(parse('{{ .PVC.Name }}')).toEqual([
      {
        kind: 'action',
        source: '{{ .PVC.Name }}',
        pipe: { line: 1, decl: [], isAssign: false, cmds: [{ args: [{ kind: 'field', names: ['PVC', 'Name'] }] }] },
      },
    ]);
    const [action] = parse('{{ $x := index .M "k" | printf "%s" }}');
    expect(action).toMatchObject({
      pipe: {
        decl: ['$x'],
        isAssign: false,
        cmds: [
          {
            args: [
              { kind: 'identifier', name: 'index' },
              { kind: 'field', names: ['M'] },
              { kind: 'string', value: 'k' },
            ],
          },
          {
            args: [
              { kind: 'identifier', name: 'printf' },
              { kind: 'string', value: '%s' },
            ],
          },
        ],
      },
    });
    expect(parse('{{ (.A).B }}')[0]).toMatchObject({
      pipe: { cmds: [{ args: [{ kind: 'chain', base: { kind: 'pipeline' }, names: ['B'] }] }] },
    });
  });

  it('if / else if / else, with / else and range / else, each with its line', () => {
    const [node] = parse('{{ if .a }}A{{ else if .b }}B{{ else }}C{{ end }}');
    expect(node).toMatchObject({
      kind: 'if',
      line: 1,
      list: [{ kind: 'text', text: 'A' }],
      elseList: [{ kind: 'if', list: [{ kind: 'text', text: 'B' }], elseList: [{ kind: 'text', text: 'C' }] }],
    });
    expect(parse('x\n{{ with .a }}[{{ . }}]{{ else }}none{{ end }}')[1]).toMatchObject({
      kind: 'with',
      line: 2,
      elseList: [{ kind: 'text', text: 'none' }],
    });
    expect(parse('{{ range $k, $v := . }}{{ $k }}{{ else }}empty{{ end }}')[0]).toMatchObject({
      kind: 'range',
      pipe: { decl: ['$k', '$v'] },
      elseList: [{ kind: 'text', text: 'empty' }],
    });
  });

  it('define at the top level, and template with or without data', () => {
    const parsed = parseTemplate('t', '{{ define "pair" }}{{ .a }}{{ end }}{{ template "pair" . }}', { unquote });
    expect(parsed.defines).toMatchObject([{ name: 'pair', root: [{ kind: 'action' }] }]);
    expect(parsed.root).toMatchObject([
      { kind: 'template', name: 'pair', pipe: { cmds: [{ args: [{ kind: 'dot' }] }] } },
    ]);
    expect(parse('{{ template "x" }}')).toMatchObject([{ kind: 'template', name: 'x', pipe: undefined }]);
  });

  it.each([
    ['a {{ .x ', 't:1: unclosed action'],
    ['{{/* x }}', 't:1: unclosed comment'],
    ['a\n{{ if .x }}a', 't:2: unexpected EOF: {{if}} has no {{end}}'],
    ['{{ end }}', 't:1: unexpected {{end}}'],
    ['{{ .a | }}', 't:1: missing command in command pipeline'],
    ['{{ }}', 't:1: missing value for command'],
    ['{{ (.a }}', 't:1: unclosed left paren'],
    ['{{ if true }}{{ define "x" }}{{ end }}{{ end }}', 't:1: define must be at the top level of a file'],
    ['{{ "a".B }}', 't:1: unexpected . after term string'],
  ])('%j fails: %s', (text, message) => {
    expect(() => parse(text)).toThrow(TemplateError);
    expect(() => parse(text)).toThrow(`template: ${message}`);
  });
});
