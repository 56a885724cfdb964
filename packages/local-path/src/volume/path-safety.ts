/**
 * Checks of a volume path's text, made before any helper pod exists: no control characters (a newline or a NUL
 * from a claim annotation would reach the scripts, and a NUL passes a `..` check), and no component longer than
 * the 255 bytes file systems allow. The error names the claim field the offending text came from.
 *
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';

/** The longest file name (one path component) Linux file systems accept, in bytes. */
export const MAX_COMPONENT_BYTES = 255;

/** A control character: C0 (including NUL, newline, tab), DEL and C1. */
const CONTROL = /\p{Cc}/u;

/** A volume path that cannot be used; `field` names the claim field it came from, when one could be told. */
export class VolumePathError extends Error {
  override readonly name = 'VolumePathError';
  constructor(
    message: string,
    /** The claim field, such as `metadata.annotations["sub"]`; `undefined` when the text came from elsewhere. */
    readonly field: string | undefined,
  ) {
    super(message);
  }
}

/** The claim's metadata fields a template can put into a path, with how to name them. */
function claimFields(meta: V1ObjectMeta): [field: string, value: string][] {
  const fields: [string, string][] = [
    ['metadata.name', meta.name ?? ''],
    ['metadata.namespace', meta.namespace ?? ''],
    ['metadata.generateName', meta.generateName ?? ''],
    ['metadata.uid', meta.uid ?? ''],
  ];
  for (const [k, v] of Object.entries(meta.labels ?? {})) fields.push([`metadata.labels[${JSON.stringify(k)}]`, v]);
  for (const [k, v] of Object.entries(meta.annotations ?? {}))
    fields.push([`metadata.annotations[${JSON.stringify(k)}]`, v]);
  return fields.filter(([, v]) => v !== '');
}

/** The first claim field whose value is in `text` and passes `bad`; else the first that passes `bad` at all. */
function culprit(meta: V1ObjectMeta, text: string, bad: (value: string) => boolean): string | undefined {
  const suspects = claimFields(meta).filter(([, v]) => bad(v));
  return (suspects.find(([, v]) => text.includes(v)) ?? suspects[0])?.[0];
}

function from(field: string | undefined): string {
  return field === undefined ? 'the StorageClass pathPattern or the config' : `the claim's ${field}`;
}

/**
 * Throws a {@link VolumePathError} when `path` has a control character or a component longer than
 * {@link MAX_COMPONENT_BYTES} bytes. The message quotes the path (JSON-escaped) and names the claim field it came
 * from (`pvc` is the claim's metadata).
 */
export function checkVolumePathText(path: string, pvc: V1ObjectMeta): void {
  if (CONTROL.test(path)) {
    const field = culprit(pvc, path, (v) => CONTROL.test(v));
    throw new VolumePathError(
      `volume path ${JSON.stringify(path)} contains a control character, from ${from(field)}; remove newlines, NULs and other control characters from it`,
      field,
    );
  }
  for (const component of path.split('/')) {
    const bytes = Buffer.byteLength(component, 'utf8');
    if (bytes <= MAX_COMPONENT_BYTES) continue;
    const field = claimFields(pvc)
      .filter(([, v]) => component.includes(v))
      .sort((a, b) => b[1].length - a[1].length)[0]?.[0];
    throw new VolumePathError(
      `volume path component ${JSON.stringify(component.slice(0, 40))}... is ${bytes} bytes long, more than the ${MAX_COMPONENT_BYTES} a file name may have, from ${from(field)}; shorten it`,
      field,
    );
  }
}

/** Whether `path` has a control character. */
export function hasControlCharacter(path: string): boolean {
  return CONTROL.test(path);
}
