/** Options of an {@link InternTable}. */
export interface InternTableOptions {
  /**
   * Distinct values held at most. When a new value would go past it, the table starts again empty: objects interned
   * before keep the copies they share, later ones share new copies. Default 4096.
   */
  capacity?: number;
  /**
   * Values longer than this many characters are returned as they are, never held: long values (a
   * `last-applied-configuration` annotation) are rarely the same in two objects. Default 256.
   */
  maxLength?: number;
}

/**
 * A bounded table of canonical strings. JSON parsing makes a new string for every value it reads (V8 shares only
 * very short ones), so a cache of thousands of objects holds thousands of copies of the same class name,
 * provisioner name or access mode; handing every copy to {@link InternTable.intern} and keeping what it returns
 * leaves one copy, shared by every object.
 *
 * Give it only values that repeat across objects: a name or a uid would take a place in the table that no other
 * object uses. The table never holds more than `capacity` values.
 */
export class InternTable {
  private readonly capacity: number;
  private readonly maxLength: number;
  private values = new Map<string, string>();

  /** @throws RangeError when `capacity` is not a positive integer or `maxLength` is negative. */
  constructor(options: InternTableOptions = {}) {
    this.capacity = options.capacity ?? 4096;
    this.maxLength = options.maxLength ?? 256;
    if (!Number.isInteger(this.capacity) || this.capacity < 1)
      throw new RangeError(`intern table capacity must be a positive integer, got ${this.capacity}`);
    if (!(this.maxLength >= 0))
      throw new RangeError(`intern table maxLength must be at least 0, got ${this.maxLength}`);
  }

  /** The table's copy of `value` (equal to it), which it keeps from now on if it had none and `value` is not long. */
  intern(value: string): string {
    const known = this.values.get(value);
    if (known !== undefined) return known;
    if (value.length > this.maxLength) return value;
    // Starting again rather than refusing new values: a table filled once (by values that did not repeat after all)
    // would otherwise never share a value first seen later, such as a new namespace or class.
    if (this.values.size >= this.capacity) this.values = new Map();
    this.values.set(value, value);
    return value;
  }

  /** Number of values held. */
  get size(): number {
    return this.values.size;
  }
}
