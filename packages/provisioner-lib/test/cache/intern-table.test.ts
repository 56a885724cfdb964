import { describe, expect, it } from 'vitest';
import { InternTable } from '../../src/cache/intern-table.js';

/** A string equal to `value` built at run time, as JSON parsing builds one for every value it reads. */
const copyOf = (value: string): string => [...value].join('');

describe('InternTable', () => {
  it('returns a value equal to the one given, the first copy it was given from then on', () => {
    const table = new InternTable();
    const first = copyOf('bench.kprov.dev/memory');
    expect(table.intern(first)).toBe('bench.kprov.dev/memory');
    expect(table.intern(copyOf('bench.kprov.dev/memory'))).toBe('bench.kprov.dev/memory');
    expect(table.intern('')).toBe('');
    expect(table.size).toBe(2);
  });

  it('never holds more than its capacity, however many distinct values it is given', () => {
    const table = new InternTable({ capacity: 3 });
    for (let i = 0; i < 1000; i++) {
      expect(table.intern(`value-${i}`)).toBe(`value-${i}`);
      expect(table.size).toBeLessThanOrEqual(3);
    }
    // Values seen after it started again are held and shared again.
    expect(table.intern(copyOf('late'))).toBe('late');
    expect(table.size).toBeLessThanOrEqual(3);
  });

  it('does not hold values longer than maxLength', () => {
    const table = new InternTable({ maxLength: 8 });
    const long = 'x'.repeat(9);
    expect(table.intern(long)).toBe(long);
    expect(table.size).toBe(0);
    expect(table.intern('x'.repeat(8))).toBe('xxxxxxxx');
    expect(table.size).toBe(1);
  });

  it('rejects a capacity that is not a positive integer and a negative maxLength', () => {
    expect(() => new InternTable({ capacity: 0 })).toThrow(RangeError);
    expect(() => new InternTable({ capacity: 1.5 })).toThrow(RangeError);
    expect(() => new InternTable({ maxLength: -1 })).toThrow(RangeError);
  });
});
