/**
 * A value read from an input that changes while the binary runs (a mounted config file, a ConfigMap's keys), kept at
 * its last good version: the "a bad config keeps the last good one" rule every provisioner binary follows, written
 * once. The reading, logging and Events stay the binary's; this says what an offered input does.
 */

/** What offering an input did (see {@link LastGood.offer}). */
export type Offered<T> =
  /**
   * The same input as the last one looked at: nothing to do. `refused` holds the error when that input was refused
   * (it still is), and is undefined when it was good.
   */
  | { readonly kind: 'unchanged'; readonly refused?: { readonly error: unknown } }
  /** The input in force came back after a refused one: the value in force stays. */
  | { readonly kind: 'restored' }
  /** A new value is in force. */
  | { readonly kind: 'applied'; readonly value: T; readonly previous: T }
  /** The input did not parse (the error `parse` threw): the value in force stays. Not repeated for the same input. */
  | { readonly kind: 'refused'; readonly error: unknown };

/** Options of {@link LastGood}. */
export interface LastGoodOptions<I, T> {
  /**
   * The value of an input; throws when the input is refused. `inForce` is the input and value in force (undefined for
   * the first), so that a part of the input that did not change can keep its value.
   */
  readonly parse: (input: I, inForce: { readonly input: I; readonly value: T } | undefined) => T;
  /** Whether two inputs are the same. Default `Object.is` (texts). */
  readonly same?: ((a: I, b: I) => boolean) | undefined;
}

/** The value of the last good input; see the module. */
export class LastGood<I, T> {
  private inForce: { input: I; value: T } | undefined;
  /** The last input looked at, good or refused (with its error); `undefined` after {@link forget}. */
  private lastSeen: { input: I; refused?: { error: unknown } } | undefined;
  private readonly same: (a: I, b: I) => boolean;

  constructor(private readonly options: LastGoodOptions<I, T>) {
    this.same = options.same ?? Object.is;
  }

  /** The value in force; undefined before {@link initial}. */
  get value(): T | undefined {
    return this.inForce?.value;
  }

  /** The input of the value in force; undefined before {@link initial}. */
  get input(): I | undefined {
    return this.inForce?.input;
  }

  /** The first input: its value is in force. Throws what `parse` throws (then nothing is in force). */
  initial(input: I): T {
    const value = this.options.parse(input, undefined);
    this.inForce = { input, value };
    this.lastSeen = { input };
    return value;
  }

  /**
   * A later input: applied when it differs from the last one looked at and parses; else the value in force stays.
   * Before {@link initial}, every input is `unchanged` (nothing is in force to replace).
   */
  offer(input: I): Offered<T> {
    const previous = this.inForce;
    if (previous === undefined) return { kind: 'unchanged' };
    const last = this.lastSeen;
    if (last !== undefined && this.same(input, last.input))
      return last.refused === undefined ? { kind: 'unchanged' } : { kind: 'unchanged', refused: last.refused };
    this.lastSeen = { input };
    if (this.same(input, previous.input)) return { kind: 'restored' };
    let value: T;
    try {
      value = this.options.parse(input, previous);
    } catch (error) {
      this.lastSeen = { input, refused: { error } };
      return { kind: 'refused', error };
    }
    this.inForce = { input, value };
    return { kind: 'applied', value, previous: previous.value };
  }

  /**
   * Forgets the last input looked at, so that the next one is looked at even when it is the same: after a problem
   * that is not the input's (it could not be read, its source is gone), whose end must be noticed.
   */
  forget(): void {
    this.lastSeen = undefined;
  }
}
