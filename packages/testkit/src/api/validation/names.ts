/**
 * Name and key format checks with apimachinery's messages (`k8s.io/apimachinery/pkg/util/validation`,
 * `pkg/api/validation/generic.go`, `pkg/api/validation/path`). Each returns the list of problem descriptions, empty
 * when the value is fine.
 */

import { byteLen } from './util.js';

/** `validation.RegexError`, including its odd `', ' + ' or '` spacing between examples. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((e, i) => {
    if (i > 0) out += ' or ';
    out += `'${e}', `;
  });
  return `${out}regex used for validation is '${fmt}')`;
}

/** `validation.MaxLenError`. */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** `validation.InclusiveRangeError`. */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

/** `IsDNS1123Label`: at most 63 characters of `[a-z0-9-]`, alphanumeric at both ends. */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(value)) {
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** `IsDNS1123Subdomain`: at most 253 characters, dot-separated DNS labels. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(value))
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QNAME_RE = new RegExp(`^${QNAME_FMT}$`);

/** `IsQualifiedName`: an optional DNS-subdomain prefix and `/`, then a name part of at most 63 characters. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLen(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QNAME_RE.test(name)) errs.push(`name part ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);

/** `IsValidLabelValue`: empty, or a qualified-name-like string of at most 63 characters. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value))
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

function chdirPrefix(value: string): string[] {
  if (value === '.') return ["must not be '.'"];
  if (value === '..') return ["must not be '..'"];
  if (value.startsWith('..')) return ["must not start with '..'"];
  return [];
}

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_RE = new RegExp(`^${CONFIG_KEY_FMT}$`);

/** `IsConfigMapKey`: the key rule for ConfigMap and Secret data. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLen(value) > 253) errs.push(maxLenError(253));
  if (!CONFIG_KEY_RE.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_KEY_FMT,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  return [...errs, ...chdirPrefix(value)];
}

/** `IsValidPortName` (IANA service names). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.startsWith('-') || port.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** `IsRelaxedEnvVarName` (the RelaxedEnvironmentVariableValidation rule, on by default since 1.32). */
export function isRelaxedEnvVarName(value: string): string[] {
  const errs: string[] = [];
  if (value.length === 0) errs.push('environment variable name must be non-empty');
  for (const ch of value) {
    const c = ch.codePointAt(0) ?? 0;
    if (c < 0x20 || c > 0x7e || ch === '=') {
      errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
      break;
    }
  }
  return errs;
}

/** `path.ValidatePathSegmentName`: what any name must satisfy to appear in a URL path. */
export function isValidPathSegmentName(name: string, prefix = false): string[] {
  if (!prefix) {
    for (const bad of ['.', '..']) if (name === bad) return [`may not be '${bad}'`];
  }
  const errs: string[] = [];
  for (const bad of ['/', '%']) if (name.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** A `ValidateNameFunc`: `prefix` is true when checking a `generateName`. */
export type NameFn = (name: string, prefix: boolean) => string[];

/** apimachinery's quirky `maskTrailingDash`: replaces the last two characters of `x-` with `a`. */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

/** `NameIsDNSSubdomain`: the name rule of most kinds. */
export const nameIsDNSSubdomain: NameFn = (name, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(name) : name);

/** `NameIsDNSLabel`: the name rule of namespaces. */
export const nameIsDNSLabel: NameFn = (name, prefix) => isDNS1123Label(prefix ? maskTrailingDash(name) : name);

/** `path.ValidatePathSegmentName`: the only name rule of core/v1 Events (and the generic check for every kind). */
export const nameIsPathSegment: NameFn = (name, prefix) => isValidPathSegmentName(name, prefix);
