import { describe, expect, it } from 'vitest';
import {
  canonicalQuantity,
  parseQuantity,
  QUANTITY_FORMAT_WRONG,
  quantityNumber,
  quantityString,
  quantityValue,
} from '../src/index.js';

describe('resource.Quantity as the apiserver serves it back', () => {
  // Each pair was checked against kube-apiserver 1.32 (a PVC's storage request created and read back).
  it.each([
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['1000M', '1G'],
    ['1e3', '1e3'],
    [' 1Gi', '1Gi'],
    ['010Mi', '010Mi'],
    [5, '5'],
    [1.5, '1500m'],
    [2147483648, '2147483648'],
    ['-1Gi', '-1Gi'],
  ] as const)('%j is served as %j', (input, served) => {
    expect(canonicalQuantity(input)).toBe(served);
  });

  it.each([
    ['0Gi', '0'],
    ['0.1', '100m'],
    ['1000', '1k'],
    ['0.0000000001', '1n'],
    ['8388608Ki', '8Gi'],
    ['1.25Ki', '1280'],
    ['12e-3', '12e-3'],
    ['2000e0', '2e3'],
  ] as const)('%j is served as %j, as apimachinery canonicalises it', (input, served) => {
    expect(canonicalQuantity(input)).toBe(served);
  });

  it('refuses what does not parse, with the decoder wording', () => {
    expect(() => canonicalQuantity('1Gx')).toThrow(QUANTITY_FORMAT_WRONG);
    expect(() => canonicalQuantity(true)).toThrow(QUANTITY_FORMAT_WRONG);
    expect(() => canonicalQuantity('1iK')).toThrow("unable to parse quantity's suffix");
  });
});

describe('Quantity.Value and sizes', () => {
  it.each([
    ['128Mi', 134217728n],
    ['1.5Gi', 1610612736n],
    ['1e3', 1000n],
    ['500M', 500000000n],
    ['100m', 1n],
    ['1.5', 2n],
    ['-1.5', -2n],
    ['0', 0n],
    ['1Ei', 1152921504606846976n],
  ])('values %s at %s, rounded up away from zero', (text, value) => {
    expect(quantityValue(parseQuantity(text))).toBe(value);
  });

  it('compares sizes as doubles, and has none for what does not parse', () => {
    expect(quantityNumber('1Gi')).toBe(1073741824);
    expect(quantityNumber(' 500m ')).toBe(0.5);
    expect(quantityNumber(3)).toBe(3);
    expect(quantityNumber('1.5e3')).toBe(1500);
    expect(quantityNumber('1Gx')).toBeUndefined();
    expect(quantityNumber('1 Gi')).toBeUndefined();
    expect(quantityNumber(undefined)).toBeUndefined();
  });

  it('prints a parsed quantity back canonical', () => {
    expect(quantityString(parseQuantity('2048Ki'))).toBe('2Mi');
  });
});
