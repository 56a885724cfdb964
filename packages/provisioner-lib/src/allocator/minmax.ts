/**
 * Allocates whole numbers from a range [min, max], as the Go library's `allocator.MinMaxAllocator` (used for GIDs).
 * Errors carry the Go messages.
 */

export class AllocatorError extends Error {
  override readonly name = 'AllocatorError';
}

export const ErrInvalidRange = (): AllocatorError => new AllocatorError('invalid range');
export const ErrConflict = (): AllocatorError => new AllocatorError('number already allocated');
export const ErrRangeFull = (): AllocatorError => new AllocatorError('range full');
export const ErrOutOfRange = (): AllocatorError => new AllocatorError('out of range');
export const ErrInternal = (): AllocatorError => new AllocatorError('internal error');

export class MinMaxAllocator {
  private min = 0;
  private max = 0;
  private freeCount = 0;
  private readonly used = new Set<number>();

  /** @throws AllocatorError `invalid range` when `min > max`. */
  constructor(min: number, max: number) {
    this.setRange(min, max);
  }

  /**
   * Changes the range. Numbers already allocated stay allocated; those inside the new range reduce the free count.
   *
   * @throws AllocatorError `invalid range` when `min > max` (the range is then unchanged).
   */
  setRange(min: number, max: number): void {
    if (min > max) throw ErrInvalidRange();
    this.min = min;
    this.max = max;
    this.freeCount = 1 + max - min;
    for (const n of this.used) if (this.inRange(n)) this.freeCount -= 1;
  }

  private inRange(n: number): boolean {
    return n >= this.min && n <= this.max;
  }

  /**
   * Allocates `n`.
   *
   * @throws AllocatorError `out of range`, or `number already allocated`.
   */
  allocate(n: number): void {
    if (!this.inRange(n)) throw ErrOutOfRange();
    if (this.used.has(n)) throw ErrConflict();
    this.used.add(n);
    this.freeCount -= 1;
  }

  /**
   * Allocates the smallest free number.
   *
   * @throws AllocatorError `range full`.
   */
  allocateNext(): number {
    if (this.freeCount <= 0) throw ErrRangeFull();
    for (let n = this.min; n <= this.max; n++) {
      if (!this.used.has(n)) {
        this.used.add(n);
        this.freeCount -= 1;
        return n;
      }
    }
    throw ErrInternal();
  }

  /** Frees `n`; freeing a number that is not allocated does nothing. */
  release(n: number): void {
    if (!this.used.delete(n)) return;
    if (this.inRange(n)) this.freeCount += 1;
  }

  has(n: number): boolean {
    return this.used.has(n);
  }

  /** How many numbers of the range are free. */
  free(): number {
    return this.freeCount;
  }
}
