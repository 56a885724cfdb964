/**
 * The error thrown for every problem with `config.json`: at load time (JSON, types, canonicalization) and when a
 * volume is placed (class lookup, node lookup, `nodePath`, shared vs node-local).
 *
 * @packageDocumentation
 */

/** What kind of problem a {@link ConfigError} reports; stable for programs, unlike the message. */
export type ConfigErrorCode =
  | 'invalid-json'
  | 'wrong-type'
  | 'null-entry'
  | 'duplicate-node'
  | 'relative-path'
  | 'root-path'
  | 'duplicate-path'
  | 'no-config'
  | 'unknown-class'
  | 'both-defined'
  | 'unconfigured'
  | 'no-paths'
  | 'node-not-listed'
  | 'no-path-on-node'
  | 'path-not-on-node'
  | 'invalid-size';

/**
 * A configuration problem. `message` is upstream's error string followed by `; ` and a hint saying what to do, so
 * a search for the upstream string still finds it; {@link ConfigError.upstream} holds the upstream string alone.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** Kind of problem. */
  readonly code: ConfigErrorCode;
  /** The error string local-path-provisioner v0.0.37 gives for the same problem (wrapping included). */
  readonly upstream: string;
  /** What the user can do about it. */
  readonly hint: string;

  constructor(code: ConfigErrorCode, upstream: string, hint: string, options?: ErrorOptions) {
    super(`${upstream}; ${hint}`, options);
    this.code = code;
    this.upstream = upstream;
    this.hint = hint;
  }

  /** A copy with upstream's message wrapped as Go's `errors.Wrapf(err, prefix)` does (`<prefix>: <message>`). */
  wrap(prefix: string): ConfigError {
    return new ConfigError(this.code, `${prefix}: ${this.upstream}`, this.hint, { cause: this });
  }
}
