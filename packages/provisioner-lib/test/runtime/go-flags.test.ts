/** Go's `flag` syntax and messages, Go durations, environment fallbacks and required flags, and the usage layout. */
import { describe, expect, it } from 'vitest';
import type { FlagTable } from '../../src/runtime/flag-table.js';
import { parseGoDuration } from '../../src/runtime/go-duration.js';
import { CommandLineError, completeFlagValues, parseGoFlags } from '../../src/runtime/go-flags.js';
import { usageText } from '../../src/runtime/usage.js';

const TABLE = {
  name: { type: 'string', usage: 'a name' },
  on: { type: 'boolean', default: true, usage: 'switch' },
  n: { type: 'int', default: 3, usage: 'a count' },
  rate: { type: 'float', usage: 'a rate' },
  wait: { type: 'duration', default: 1500, usage: 'how long to wait' },
  even: {
    type: 'int',
    usage: 'an even number',
    check: (n: number) => {
      if (n % 2 !== 0) throw new Error('must be even');
    },
  },
} as const satisfies FlagTable;

function values(args: string[]): Record<string, unknown> {
  return Object.fromEntries(parseGoFlags(args, TABLE).values);
}

function failure(args: string[]): string {
  try {
    parseGoFlags(args, TABLE);
  } catch (err) {
    expect(err).toBeInstanceOf(CommandLineError);
    return (err as Error).message;
  }
  throw new Error('expected a CommandLineError');
}

describe('parseGoDuration', () => {
  it('reads what Go reads, in ms', () => {
    expect(parseGoDuration('15s')).toBe(15_000);
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('1.5h')).toBe(5_400_000);
    expect(parseGoDuration('300ms')).toBe(300);
    expect(parseGoDuration('2us')).toBe(0.002);
    expect(parseGoDuration('2µs')).toBe(0.002);
    expect(parseGoDuration('1000000ns')).toBe(1);
    expect(parseGoDuration('-2s')).toBe(-2000);
    expect(parseGoDuration('+.5s')).toBe(500);
    expect(parseGoDuration('1.s')).toBe(1000);
    expect(parseGoDuration('0')).toBe(0);
  });

  it('refuses what Go refuses', () => {
    for (const text of ['', '1', '15', 's', '.s', '1x', '1 s', '1s2', '--1s', '1.2.3s', '-'])
      expect(parseGoDuration(text), text).toBeUndefined();
  });
});

describe('parseGoFlags', () => {
  it('takes -flag and --flag, with the value after = or as the next argument', () => {
    expect(values(['-name', 'a', '--n=7', '--rate', '0.5', '-wait=1m'])).toEqual({
      name: 'a',
      n: 7,
      rate: 0.5,
      wait: 60_000,
    });
  });

  it("takes booleans only as -flag or -flag=value, in Go's spellings", () => {
    expect(values(['-on=false'])).toEqual({ on: false });
    expect(values(['--on'])).toEqual({ on: true });
    expect(values(['-on=F'])).toEqual({ on: false });
    expect(values(['-on=1'])).toEqual({ on: true });
    // `-on false`: "false" is the first argument that is not a flag.
    expect(parseGoFlags(['-on', 'false'], TABLE)).toEqual({
      values: new Map([['on', true]]),
      rest: ['false'],
      help: false,
    });
  });

  it("reads integers as Go's ParseInt with base 0, and keeps the last of a repeated flag", () => {
    expect(values(['-n', '0x10'])).toEqual({ n: 16 });
    expect(values(['-n', '010'])).toEqual({ n: 8 });
    expect(values(['-n', '1_000'])).toEqual({ n: 1000 });
    expect(values(['-n', '-4'])).toEqual({ n: -4 });
    expect(values(['-n', '1', '-n', '2'])).toEqual({ n: 2 });
  });

  it('stops at the first argument that is not a flag, and after --', () => {
    expect(parseGoFlags(['-n', '1', 'start', '-n', '2'], TABLE).rest).toEqual(['start', '-n', '2']);
    expect(parseGoFlags(['--', '-n', '2'], TABLE)).toEqual({ values: new Map(), rest: ['-n', '2'], help: false });
    expect(parseGoFlags(['-'], TABLE).rest).toEqual(['-']);
  });

  it('stops at -h, -help or --help', () => {
    for (const help of ['-h', '-help', '--help', '--h'])
      expect(parseGoFlags(['-n', '1', help, '-bogus'], TABLE).help, help).toBe(true);
  });

  it("fails with Go's messages", () => {
    expect(failure(['-bogus'])).toBe('flag provided but not defined: -bogus');
    expect(failure(['---n'])).toBe('bad flag syntax: ---n');
    expect(failure(['-=1'])).toBe('bad flag syntax: -=1');
    expect(failure(['-n'])).toBe('flag needs an argument: -n');
    expect(failure(['-n', 'x'])).toBe('invalid value "x" for flag -n: parse error');
    expect(failure(['-n', '99999999999999999999'])).toBe(
      'invalid value "99999999999999999999" for flag -n: value out of range',
    );
    expect(failure(['-rate', '1,5'])).toBe('invalid value "1,5" for flag -rate: parse error');
    expect(failure(['-wait', '15'])).toBe('invalid value "15" for flag -wait: parse error');
    expect(failure(['-on=maybe'])).toBe('invalid boolean value "maybe" for -on: parse error');
  });

  it("runs a flag's check and reports its reason", () => {
    expect(values(['-even', '4'])).toEqual({ even: 4 });
    expect(failure(['-even', '3'])).toBe('invalid value "3" for flag -even: must be even');
  });

  it("takes aliases, storing the value under the flag's name and naming the alias in messages", () => {
    const aliases = { count: 'n', c: 'n', nowhere: 'missing' };
    expect(Object.fromEntries(parseGoFlags(['-c', '4'], TABLE, { aliases }).values)).toEqual({ n: 4 });
    expect(Object.fromEntries(parseGoFlags(['--count=5', '-n', '6'], TABLE, { aliases }).values)).toEqual({ n: 6 });
    expect(() => parseGoFlags(['--count=x'], TABLE, { aliases })).toThrow(
      'invalid value "x" for flag -count: parse error',
    );
    expect(() => parseGoFlags(['--nowhere'], TABLE, { aliases })).toThrow('flag provided but not defined: -nowhere');
  });

  it('names the flag an error is about, as in the table', () => {
    const flagOf = (args: string[]): string | undefined => {
      try {
        parseGoFlags(args, TABLE, { aliases: { c: 'n' } });
      } catch (err) {
        return (err as CommandLineError).flag;
      }
      throw new Error('expected a CommandLineError');
    };
    expect(flagOf(['-c', 'x'])).toBe('n');
    expect(flagOf(['-name'])).toBe('name');
    expect(flagOf(['-on=maybe'])).toBe('on');
    expect(flagOf(['-nope'])).toBe('nope');
    expect(flagOf(['---n'])).toBeUndefined();
  });

  it('notes requests such as help and version and parses on, instead of stopping at -help', () => {
    const requests = { help: 'help', h: 'help', version: 'version', v: 'version' };
    expect(parseGoFlags(['-h', '-n', '2', '--version=x', 'rest'], TABLE, { requests })).toEqual({
      values: new Map([['n', 2]]),
      rest: ['rest'],
      help: false,
      requests: new Set(['help', 'version']),
    });
    expect(() => parseGoFlags(['--help', '--nope'], TABLE, { requests })).toThrow(
      'flag provided but not defined: -nope',
    );
    expect(parseGoFlags(['-n', '2'], TABLE, { requests }).requests).toEqual(new Set());
  });
});

describe('completeFlagValues', () => {
  const table = {
    node: { type: 'string', env: 'NODE_NAME', required: true, usage: 'node' },
    dir: { type: 'string', env: 'DIR', default: '/d', usage: 'dir' },
    n: { type: 'int', env: 'N', usage: 'n' },
  } as const satisfies FlagTable;

  it('takes the flag, else its environment variable (an empty one counts as unset), else the default', () => {
    const complete = (flags: [string, string | number][], env: Record<string, string>): Record<string, unknown> =>
      Object.fromEntries(completeFlagValues(new Map(flags), table, env));
    expect(complete([['node', 'a']], { NODE_NAME: 'b', DIR: '/e' })).toEqual({ node: 'a', dir: '/e' });
    expect(complete([], { NODE_NAME: 'b', DIR: '', N: '0x1f' })).toEqual({ node: 'b', dir: '/d', n: 31 });
  });

  it('fails for a missing required flag and for an environment value that does not convert', () => {
    expect(() => completeFlagValues(new Map(), table, { NODE_NAME: '' })).toThrow(
      new CommandLineError('flag -node (or environment variable NODE_NAME) is required'),
    );
    expect(() => completeFlagValues(new Map([['node', 'a']]), table, { N: 'many' })).toThrow(
      new CommandLineError('invalid value "many" of environment variable N for flag -n: parse error'),
    );
  });
});

describe('usageText', () => {
  it("lays the flags out as Go's PrintDefaults, sorted, with the value name from backquotes, env, required and non-zero defaults", () => {
    const table = {
      zone: { type: 'string', default: 'a b', usage: 'the `zone` to use' },
      x: { type: 'boolean', usage: 'one letter' },
      wait: { type: 'duration', default: 90_000, usage: 'how long' },
      node: { type: 'string', env: 'NODE_NAME', required: true, usage: 'node\nsecond line' },
      count: { type: 'int', default: 0, usage: 'count' },
    } as const satisfies FlagTable;
    expect(usageText('prog', table)).toBe(
      'Usage of prog:\n' +
        '  -count int\n    \tcount\n' +
        '  -node string\n    \tnode\n    \tsecond line (env NODE_NAME) (required)\n' +
        '  -wait duration\n    \thow long (default 1m30s)\n' +
        '  -x\tone letter\n' +
        '  -zone zone\n    \tthe zone to use (default "a b")\n',
    );
  });
});
