/**
 * A small least-recently-used map, as the correlator's caches use (client-go uses groupcache's `lru`). Reading an
 * entry marks it used; adding beyond `capacity` evicts the least recently used one.
 */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();

  /** @param capacity - maximum number of entries kept; at least 1. */
  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`LRU capacity must be a positive integer, got ${capacity}`);
  }

  /** The value for `key`, marking it most recently used. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Stores `value` under `key` as the most recently used entry, evicting the oldest one when full. */
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
  }

  /** Number of entries held. */
  get size(): number {
    return this.entries.size;
  }
}
