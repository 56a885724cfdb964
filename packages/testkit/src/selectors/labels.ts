/**
 * Label selectors as kube-apiserver parses and evaluates them (`k8s.io/apimachinery/pkg/labels`): the string
 * syntax of `?labelSelector=` and `kubectl -l`, and `metav1.LabelSelector` objects. Parse errors carry the
 * apiserver's exact messages, wrapped in a 400 BadRequest as the list and watch handlers answer.
 */

import { badRequest } from '../api/status.js';

/** A requirement operator, spelled as `selection.Operator` spells it. */
export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

/** One term of a selector: a key, an operator and the values it compares with. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Empty for `exists` and `!`; one value for `=`, `==`, `!=`, `gt`, `lt`; one or more for `in` and `notin`. */
  readonly values: readonly string[];
}

/** A parsed selector: the AND of its requirements. */
export interface LabelSelector {
  /** Sorted by key, like the real parser; an empty list selects everything. */
  readonly requirements: readonly LabelRequirement[];
  /** True only for the selector made from a null `metav1.LabelSelector`, which selects nothing. */
  readonly matchesNothing: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Key and value validation (k8s.io/apimachinery/pkg/util/validation), with the exact wording of its messages.

const NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const NAME_RE = new RegExp(`^${NAME_FMT}$`);
const NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const SUBDOMAIN_RE = new RegExp(`^${SUBDOMAIN_FMT}$`);
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${NAME_FMT})?`;
const VALUE_RE = new RegExp(`^${VALUE_FMT}$`);
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

const utf8 = new TextEncoder();
const byteLength = (s: string): number => utf8.encode(s).length;

function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

const maxLenError = (n: number): string => `must be no more than ${n} characters`;

/** `IsQualifiedName`: the problems with a label key, empty when it is valid. */
function labelKeyProblems(key: string): string[] {
  const problems: string[] = [];
  const parts = key.split('/');
  let name: string;
  if (parts.length === 1) {
    name = key;
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix === '') {
      problems.push('prefix part must be non-empty');
    } else {
      if (byteLength(prefix) > 253) problems.push(`prefix part ${maxLenError(253)}`);
      if (!SUBDOMAIN_RE.test(prefix))
        problems.push(`prefix part ${regexError(SUBDOMAIN_MSG, SUBDOMAIN_FMT, 'example.com')}`);
    }
  } else {
    return [
      `a qualified name ${regexError(NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name === '') problems.push('name part must be non-empty');
  else if (byteLength(name) > 63) problems.push(`name part ${maxLenError(63)}`);
  if (!NAME_RE.test(name)) problems.push(`name part ${regexError(NAME_MSG, NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return problems;
}

/** `IsValidLabelValue`: the problems with a label value, empty when it is valid. */
function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (byteLength(value) > 63) problems.push(maxLenError(63));
  if (!VALUE_RE.test(value)) problems.push(regexError(VALUE_MSG, VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return problems;
}

/** Renders a value as `field.Error` does for a string (`%q`) or a string slice (`%#v`). */
function renderBadValue(value: string | readonly string[]): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** A `field.Invalid` error as text: `<path>: Invalid value: <value>: <detail>`. */
function invalid(path: string, value: string | readonly string[], detail: string): string {
  return `${path}: Invalid value: ${renderBadValue(value)}: ${detail}`;
}

/** `utilerrors.NewAggregate(...).Error()`: one message alone, several as a bracketed, de-duplicated list. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? (unique[0] ?? '') : `[${unique.join(', ')}]`;
}

/** Whether `s` parses as a base-10 int64, like `strconv.ParseInt(s, 10, 64)`. */
function int64Of(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/**
 * `labels.NewRequirement` without a field path: validates the key, the number of values for the operator and
 * each value; returns the requirement or the aggregated error text.
 */
function newRequirement(key: string, operator: LabelOperator, values: readonly string[]): LabelRequirement | string {
  const errors: string[] = [];
  const keyProblems = labelKeyProblems(key);
  if (keyProblems.length > 0) errors.push(invalid('key', key, keyProblems.join('; ')));
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0)
        errors.push(invalid('values', values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1)
        errors.push(invalid('values', values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0)
        errors.push(invalid('values', values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1)
        errors.push(invalid('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (int64Of(v) === undefined) {
          errors.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
  }
  values.forEach((v, i) => {
    const problems = labelValueProblems(v);
    if (problems.length > 0) errors.push(invalid(`values[${i}][${key}]`, v, problems.join('; ')));
  });
  if (errors.length > 0) return aggregate(errors);
  return { key, operator, values: [...values] };
}

// ---------------------------------------------------------------------------------------------------------------
// The lexer and the recursive-descent parser of the string syntax, following the grammar of `labels.Parse`.

type TokenKind =
  | 'error'
  | 'end'
  | 'closePar'
  | 'comma'
  | 'not'
  | 'doubleEquals'
  | 'equals'
  | 'greater'
  | 'identifier'
  | 'in'
  | 'less'
  | 'notEquals'
  | 'notin'
  | 'openPar';

interface Token {
  kind: TokenKind;
  literal: string;
}

const SYMBOLS: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  [')', 'closePar'],
  [',', 'comma'],
  ['!', 'not'],
  ['==', 'doubleEquals'],
  ['=', 'equals'],
  ['>', 'greater'],
  ['<', 'less'],
  ['!=', 'notEquals'],
  ['(', 'openPar'],
]);

const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSymbol = (c: string): boolean => '=!(),><'.includes(c);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  for (;;) {
    while (pos < text.length && isSpace(text.charAt(pos))) pos++;
    if (pos >= text.length) {
      tokens.push({ kind: 'end', literal: '' });
      return tokens;
    }
    if (isSymbol(text.charAt(pos))) {
      // The longest run of symbol characters that still spells an operator.
      let buffer = '';
      let best: Token | undefined;
      while (pos < text.length && isSymbol(text.charAt(pos))) {
        const candidate = buffer + text.charAt(pos);
        const kind = SYMBOLS.get(candidate);
        if (kind !== undefined) best = { kind, literal: candidate };
        else if (best !== undefined) break;
        buffer = candidate;
        pos++;
      }
      tokens.push(best ?? { kind: 'error', literal: `error expected: keyword found '${buffer}'` });
      continue;
    }
    const start = pos;
    while (pos < text.length && !isSymbol(text.charAt(pos)) && !isSpace(text.charAt(pos))) pos++;
    const word = text.slice(start, pos);
    tokens.push({ kind: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'identifier', literal: word });
  }
}

/** Where a token is read: in `Values` context the keywords `in` and `notin` are plain identifiers. */
type Context = 'keyAndOperator' | 'values';

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

class ParseError extends Error {}

class Parser {
  private position = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  private token(at: number, context: Context): Token {
    const t = this.tokens[Math.min(at, this.tokens.length - 1)] ?? { kind: 'end', literal: '' };
    if (context === 'values' && (t.kind === 'in' || t.kind === 'notin'))
      return { kind: 'identifier', literal: t.literal };
    return t;
  }

  private lookahead(context: Context): Token {
    return this.token(this.position, context);
  }

  private consume(context: Context): Token {
    const t = this.token(this.position, context);
    this.position++;
    return t;
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const next = this.lookahead('values');
      if (next.kind === 'end') return requirements;
      if (next.kind !== 'identifier' && next.kind !== 'not') {
        throw new ParseError(`found '${next.literal}', expected: !, identifier, or 'end of string'`);
      }
      let requirement: LabelRequirement;
      try {
        requirement = this.parseRequirement();
      } catch (e) {
        if (e instanceof ParseError) throw new ParseError(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      requirements.push(requirement);
      const after = this.consume('values');
      if (after.kind === 'end') return requirements;
      if (after.kind !== 'comma') throw new ParseError(`found '${after.literal}', expected: ',' or 'end of string'`);
      const following = this.lookahead('values');
      if (following.kind !== 'identifier' && following.kind !== 'not') {
        throw new ParseError(`found '${following.literal}', expected: identifier after ','`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator: inferred } = this.parseKeyAndInferOperator();
    let operator: LabelOperator;
    let values: string[];
    if (inferred !== undefined) {
      operator = inferred;
      values = [];
    } else {
      operator = this.parseOperator();
      values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    }
    // The parser collects values in a set and hands them over sorted.
    const result = newRequirement(key, operator, [...new Set(values)].sort());
    if (typeof result === 'string') throw new ParseError(result);
    return result;
  }

  private parseKeyAndInferOperator(): { key: string; operator: 'exists' | '!' | undefined } {
    let operator: 'exists' | '!' | undefined;
    let t = this.consume('values');
    if (t.kind === 'not') {
      operator = '!';
      t = this.consume('values');
    }
    if (t.kind !== 'identifier') throw new ParseError(`found '${t.literal}', expected: identifier`);
    const problems = labelKeyProblems(t.literal);
    // The key check here runs with a nil field path, which renders as `<nil>`.
    if (problems.length > 0) throw new ParseError(invalid('<nil>', t.literal, problems.join('; ')));
    const next = this.lookahead('values').kind;
    if ((next === 'end' || next === 'comma') && operator !== '!') operator = 'exists';
    return { key: t.literal, operator };
  }

  private parseOperator(): LabelOperator {
    const t = this.consume('keyAndOperator');
    switch (t.kind) {
      case 'in':
        return 'in';
      case 'equals':
        return '=';
      case 'doubleEquals':
        return '==';
      case 'greater':
        return 'gt';
      case 'less':
        return 'lt';
      case 'notin':
        return 'notin';
      case 'notEquals':
        return '!=';
      case 'closePar':
      case 'comma':
      case 'end':
      case 'error':
      case 'identifier':
      case 'not':
      case 'openPar':
        throw new ParseError(`found '${t.literal}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private parseValues(): string[] {
    const open = this.consume('values');
    if (open.kind !== 'openPar') throw new ParseError(`found '${open.literal}' expected: '('`);
    const first = this.lookahead('values');
    if (first.kind === 'closePar') {
      this.consume('values');
      return [''];
    }
    if (first.kind !== 'identifier' && first.kind !== 'comma') {
      throw new ParseError(`found '${first.literal}', expected: ',', ')' or identifier`);
    }
    const values = this.parseIdentifiersList();
    const close = this.consume('values');
    if (close.kind !== 'closePar') throw new ParseError(`found '${first.literal}', expected: ')'`);
    return values;
  }

  /** A comma-separated list of possibly empty identifiers, up to (not including) the closing parenthesis. */
  private parseIdentifiersList(): string[] {
    const values: string[] = [];
    for (;;) {
      const t = this.consume('values');
      if (t.kind === 'identifier') {
        values.push(t.literal);
        const next = this.lookahead('values');
        if (next.kind === 'comma') continue;
        if (next.kind === 'closePar') return values;
        throw new ParseError(`found '${next.literal}', expected: ',' or ')'`);
      }
      if (t.kind === 'comma') {
        // A comma with nothing before or after it stands for an empty value.
        if (values.length === 0) values.push('');
        const next = this.lookahead('values');
        if (next.kind === 'closePar') {
          values.push('');
          return values;
        }
        if (next.kind === 'comma') values.push('');
        continue;
      }
      throw new ParseError(`found '${t.literal}', expected: ',', or identifier`);
    }
  }

  private parseExactValue(): string[] {
    const next = this.lookahead('values');
    if (next.kind === 'end' || next.kind === 'comma') return [''];
    const t = this.consume('values');
    if (t.kind === 'identifier') return [t.literal];
    throw new ParseError(`found '${t.literal}', expected: identifier`);
  }
}

const byKey = (a: LabelRequirement, b: LabelRequirement): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/**
 * Parses a label selector in the string syntax of `?labelSelector=` and `kubectl -l`: comma-joined requirements
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>n` and `k<n`, with any whitespace between
 * tokens. The empty string selects everything.
 *
 * @throws StatusError 400 BadRequest with `labels.Parse`'s message, e.g.
 *   `unable to parse requirement: found '', expected: '('`.
 */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    const requirements = new Parser(tokenize(text)).parse();
    return { requirements: requirements.sort(byKey), matchesNothing: false };
  } catch (e) {
    if (e instanceof ParseError) throw badRequest(e.message);
    throw e;
  }
}

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const actual = int64Of(value);
      const bound = int64Of(r.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return r.operator === 'gt' ? actual > bound : actual < bound;
    }
  }
}

/**
 * Whether a label set satisfies every requirement of a selector. A missing label set counts as empty, so `!k`
 * and `k notin (...)` match it; `gt` and `lt` compare as integers and never match a non-integer label.
 */
export function matchesLabels(sel: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (sel.matchesNothing) return false;
  const set = labels ?? {};
  return sel.requirements.every((r) => requirementMatches(r, set));
}

/** One `metav1.LabelSelectorRequirement`. */
export interface LabelSelectorRequirementObject {
  key: string;
  /** `In`, `NotIn`, `Exists` or `DoesNotExist`. */
  operator: string;
  values?: readonly string[];
}

/** A `metav1.LabelSelector` as it appears in objects. */
export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>>;
  matchExpressions?: readonly LabelSelectorRequirementObject[];
}

const OBJECT_OPERATORS: Readonly<Record<string, LabelOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * Converts a `metav1.LabelSelector` to a selector, as `metav1.LabelSelectorAsSelector` does: a null or absent
 * selector matches nothing, an empty one matches everything, `matchLabels` entries are `=` requirements and
 * `matchExpressions` use the operators `In`, `NotIn`, `Exists` and `DoesNotExist`.
 *
 * @throws StatusError 400 BadRequest with the apimachinery message for an unknown operator
 *   (`"Gt" is not a valid label selector operator`), an invalid key or value, or a value count the operator does
 *   not allow (e.g. `values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty`).
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return { requirements: [], matchesNothing: true };
  const requirements: LabelRequirement[] = [];
  const add = (r: LabelRequirement | string): void => {
    if (typeof r === 'string') throw badRequest(r);
    requirements.push(r);
  };
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) add(newRequirement(key, '=', [value]));
  for (const expr of sel.matchExpressions ?? []) {
    const operator = Object.prototype.hasOwnProperty.call(OBJECT_OPERATORS, expr.operator)
      ? OBJECT_OPERATORS[expr.operator]
      : undefined;
    if (operator === undefined)
      throw badRequest(`${JSON.stringify(expr.operator)} is not a valid label selector operator`);
    add(newRequirement(expr.key, operator, expr.values ?? []));
  }
  return { requirements: requirements.sort(byKey), matchesNothing: false };
}
