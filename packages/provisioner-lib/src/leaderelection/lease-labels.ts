/**
 * Labels for the Lease (the CSI sidecars' `--leader-election-labels`), checked as the API server checks labels
 * (apimachinery's `IsQualifiedName` and `IsValidLabelValue`), so that a bad one is refused when the program starts
 * instead of failing every Lease write.
 */

/** A name part of a label key, or a non-empty label value: alphanumerics, `-`, `_`, `.` inside. */
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** A DNS-1123 subdomain, the optional prefix of a label key. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a label key, or undefined when it is one. */
export function labelKeyError(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !SUBDOMAIN.test(prefix)))
    return `label key "${key}": the prefix before "/" must be a DNS subdomain (lower case, e.g. "example.com")`;
  if (name.length > 63 || !NAME.test(name))
    return `label key "${key}": the name must be 1 to 63 characters, alphanumeric at both ends, with "-", "_" or "." inside`;
  return undefined;
}

/** Why `value` is not a label value, or undefined when it is one (empty included). */
export function labelValueError(key: string, value: string): string | undefined {
  if (value === '' || (value.length <= 63 && NAME.test(value))) return undefined;
  return `label value "${value}" of "${key}": must be at most 63 characters, alphanumeric at both ends, with "-", "_" or "." inside`;
}

/** The first reason a label of `labels` is not valid, or undefined when they all are. */
export function labelsError(labels: Readonly<Record<string, string>>): string | undefined {
  for (const [key, value] of Object.entries(labels)) {
    const error = labelKeyError(key) ?? labelValueError(key, value);
    if (error !== undefined) return error;
  }
  return undefined;
}
