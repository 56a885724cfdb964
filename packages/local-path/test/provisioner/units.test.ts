/** Pure parts of the provisioner: quantities, and reading a PV's path and node affinity. */
import { describe, expect, it } from 'vitest';
import { quantityToBytes } from '../../src/config/index.js';
import { affinityTermOf, volumePathOf } from '../../src/provisioner/index.js';

describe('quantityToBytes', () => {
  it('reads binary, decimal and exponent suffixes, rounding up', () => {
    expect(quantityToBytes('128Mi')).toBe(134_217_728n);
    expect(quantityToBytes('1.5Gi')).toBe(1_610_612_736n);
    expect(quantityToBytes('500M')).toBe(500_000_000n);
    expect(quantityToBytes('1e3')).toBe(1000n);
    expect(quantityToBytes('1500m')).toBe(2n);
    expect(quantityToBytes(undefined)).toBe(0n);
  });
  it('refuses what is not a quantity', () => {
    expect(() => quantityToBytes('12 apples')).toThrow('invalid quantity "12 apples"');
    expect(() => quantityToBytes('-1Gi')).toThrow('invalid quantity');
  });
});

describe('reading a PV', () => {
  it('needs exactly one of hostPath and local', () => {
    expect(volumePathOf({ spec: { hostPath: { path: '/a' } } })).toBe('/a');
    expect(volumePathOf({ spec: { local: { path: '/b' } } })).toBe('/b');
    expect(() => volumePathOf({ spec: {} })).toThrow('no path set');
    expect(() => volumePathOf({ spec: { hostPath: { path: '/a' }, local: { path: '/b' } } })).toThrow('no path set');
  });
  it('takes the first In expression of the node affinity, with upstream errors', () => {
    const term = (values: string[], operator = 'In') => ({
      spec: {
        nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator, values }] }] } },
      },
    });
    expect(affinityTermOf(term(['n1']))).toEqual({ key: 'k', value: 'n1' });
    expect(() => affinityTermOf(term(['n1', 'n2']))).toThrow('multiple values for the node affinity');
    expect(() => affinityTermOf(term(['n1'], 'NotIn'))).toThrow('cannot find affinited node');
    expect(() => affinityTermOf({ spec: {} })).toThrow('no NodeAffinity set');
    expect(() => affinityTermOf({ spec: { nodeAffinity: {} } })).toThrow('no NodeAffinity.Required set');
  });
});
