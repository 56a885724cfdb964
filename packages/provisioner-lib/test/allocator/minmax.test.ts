/** The Go library's allocator/minmax_test.go cases, by their Go names. */
import { describe, expect, it } from 'vitest';
import { MinMaxAllocator } from '../../src/allocator/minmax.js';

describe('MinMaxAllocator', () => {
  it('TestNewFree', () => {
    expect(new MinMaxAllocator(1, 10).free()).toBe(10);
  });

  it('TestNewInvalidRange', () => {
    expect(() => new MinMaxAllocator(10, 1)).toThrow('invalid range');
  });

  it('TestSetRange', () => {
    const m = new MinMaxAllocator(1, 10);
    expect(() => m.setRange(10, 1)).toThrow('invalid range');
    m.setRange(1, 2);
    expect(m.free()).toBe(2);
    m.allocate(1);
    expect(m.free()).toBe(1);
    m.setRange(1, 1);
    expect(m.free()).toBe(0);
    m.setRange(2, 2);
    expect(m.free()).toBe(1);
  });

  it('TestAllocateNext', () => {
    const m = new MinMaxAllocator(1, 10);
    const n = m.allocateNext();
    expect(m.has(n)).toBe(true);
    expect(m.free()).toBe(9);
  });

  it('TestAllocateMax', () => {
    const m = new MinMaxAllocator(1, 10);
    for (let i = 0; i < 10; i++) m.allocateNext();
    expect(() => m.allocateNext()).toThrow('range full');
    expect(m.free()).toBe(0);
  });

  it('TestAllocate', () => {
    const m = new MinMaxAllocator(1, 10);
    m.allocate(3);
    expect(m.has(3)).toBe(true);
    expect(m.free()).toBe(9);
  });

  it('TestAllocateConflict', () => {
    const m = new MinMaxAllocator(1, 10);
    m.allocate(3);
    expect(() => m.allocate(3)).toThrow('number already allocated');
  });

  it('TestAllocateOutOfRange', () => {
    const m = new MinMaxAllocator(1, 10);
    expect(() => m.allocate(11)).toThrow('out of range');
  });

  it('TestRelease', () => {
    const m = new MinMaxAllocator(1, 10);
    m.allocate(3);
    m.release(3);
    expect(m.has(3)).toBe(false);
    expect(m.free()).toBe(10);
  });
});
