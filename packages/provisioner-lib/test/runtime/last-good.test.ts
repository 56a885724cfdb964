/** The keep-last-good rule: a new input replaces the value only when it parses; a refusal is reported once. */
import { describe, expect, it } from 'vitest';
import { LastGood } from '../../src/runtime/last-good.js';

/** A number from a text; anything else is refused. */
function numbers(): LastGood<string, number> {
  return new LastGood({
    parse: (text) => {
      const n = Number(text);
      if (text === '' || Number.isNaN(n)) throw new Error(`not a number: ${text}`);
      return n;
    },
  });
}

describe('LastGood', () => {
  it('keeps the first value, and throws when the first input is refused', () => {
    const state = numbers();
    expect(() => state.initial('x')).toThrow('not a number: x');
    expect(state.value).toBeUndefined();
    expect(state.initial('1')).toBe(1);
    expect({ value: state.value, input: state.input }).toEqual({ value: 1, input: '1' });
  });

  it('applies a new input that parses, and nothing for the same input again', () => {
    const state = numbers();
    state.initial('1');
    expect(state.offer('1')).toEqual({ kind: 'unchanged' });
    expect(state.offer('2')).toEqual({ kind: 'applied', value: 2, previous: 1 });
    expect(state.offer('2')).toEqual({ kind: 'unchanged' });
    expect(state.value).toBe(2);
  });

  it('keeps the value in force when an input is refused, reporting the refusal once', () => {
    const state = numbers();
    state.initial('1');
    const refused = state.offer('x');
    expect(refused.kind).toBe('refused');
    expect(state.value).toBe(1);
    const again = state.offer('x');
    expect(again.kind).toBe('unchanged');
    expect(again.kind === 'unchanged' ? String(again.refused?.error) : '').toBe('Error: not a number: x');
    expect(state.offer('1')).toEqual({ kind: 'restored' });
    expect(state.offer('x').kind).toBe('refused');
  });

  it('looks at the same input again after forget', () => {
    const state = numbers();
    state.initial('1');
    expect(state.offer('x').kind).toBe('refused');
    state.forget();
    expect(state.offer('x').kind).toBe('refused');
  });

  it('hands the input and value in force to parse, so an unchanged part keeps its value', () => {
    const parsed: string[] = [];
    const state = new LastGood<{ a: string; b: string }, { a: string; b: string }>({
      parse: (input, inForce) => {
        if (inForce !== undefined && inForce.input.a === input.a) return { ...inForce.value, b: input.b };
        parsed.push(input.a);
        return { ...input };
      },
      same: (x, y) => x.a === y.a && x.b === y.b,
    });
    state.initial({ a: '1', b: '1' });
    expect(state.offer({ a: '1', b: '2' }).kind).toBe('applied');
    expect(parsed).toEqual(['1']);
  });

  it('takes no input before the first', () => {
    expect(numbers().offer('1')).toEqual({ kind: 'unchanged' });
  });
});
