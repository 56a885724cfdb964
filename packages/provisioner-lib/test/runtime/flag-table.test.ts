/**
 * What a binary that keeps its upstream's command line asks of the runtime's flag table: aliases in the table,
 * checks that see the text and may word their own error, urfave/cli's reading of environment variables, the help's
 * value names and defaults, and client-go's order of the Lease timings.
 */
import { describe, expect, it } from 'vitest';
import type { FlagTable } from '../../src/runtime/flag-table.js';
import { CommandLineError, completeFlagValues, parseGoFlags } from '../../src/runtime/go-flags.js';
import { leaseTimingProblem, longerThan } from '../../src/runtime/lease-timing.js';
import { flagDefaultText, usageText } from '../../src/runtime/usage.js';

const TABLE = {
  'kube-api-qps': { type: 'float', aliases: ['kube-client-qps'], default: 5, usage: 'qps' },
  debug: { type: 'boolean', aliases: ['d'], env: 'DEBUG', default: false, usage: 'debug' },
  port: { type: 'int', env: 'PORT', default: 8080, usage: 'port' },
  name: { type: 'string', env: 'NAME', default: 'x', valueName: 'NAME', usage: 'name' },
  period: {
    type: 'duration',
    default: 2000,
    usage: 'period',
    check: (ms: number, text: string) => {
      if (ms <= 0)
        throw new CommandLineError(`invalid flag period "${text}": must be greater than zero`, 'period', {
          exitCode: 1,
        });
    },
  },
  endpoint: { type: 'string', defaultText: 'off', usage: 'endpoint' },
} as const satisfies FlagTable;

function thrown(run: () => unknown): CommandLineError {
  try {
    run();
  } catch (err) {
    if (err instanceof CommandLineError) return err;
    throw err;
  }
  throw new Error('expected a CommandLineError');
}

describe('the flag table', () => {
  it("takes a flag's aliases from the table, storing the value under its name", () => {
    expect(Object.fromEntries(parseGoFlags(['--kube-client-qps', '2', '-d'], TABLE).values)).toEqual({
      'kube-api-qps': 2,
      debug: true,
    });
    expect(thrown(() => parseGoFlags(['--kube-client-qps=x'], TABLE))).toMatchObject({
      message: 'invalid value "x" for flag -kube-client-qps: parse error',
      flag: 'kube-api-qps',
      exitCode: 2,
    });
  });

  it('hands a check the text as given, and throws the CommandLineError a check throws as it is', () => {
    expect(thrown(() => parseGoFlags(['--period=0ms'], TABLE))).toMatchObject({
      message: 'invalid flag period "0ms": must be greater than zero',
      flag: 'period',
      exitCode: 1,
      showHelp: false,
    });
  });

  it("reads environment variables by urfave/cli's rules when asked", () => {
    const urfave = (env: Record<string, string>): Record<string, unknown> =>
      Object.fromEntries(completeFlagValues(new Map(), TABLE, env, { envRules: 'urfave' }));
    expect(urfave({ DEBUG: '', PORT: '', NAME: '' })).toMatchObject({ debug: false, port: 8080, name: '' });
    expect(urfave({ DEBUG: '1', PORT: '0x10' })).toMatchObject({ debug: true, port: 16 });
    expect(thrown(() => urfave({ PORT: 'abc' }))).toMatchObject({
      message:
        'could not parse "abc" as int64 value from environment variable "PORT" for flag port: strconv.ParseInt: parsing "abc": invalid syntax',
      flag: 'port',
    });
    expect(thrown(() => urfave({ DEBUG: 'yes' })).message).toBe(
      'could not parse "yes" as bool value from environment variable "DEBUG" for flag debug: strconv.ParseBool: parsing "yes": invalid syntax',
    );
    // The sidecars' rule: an empty variable is unset.
    expect(Object.fromEntries(completeFlagValues(new Map(), TABLE, { NAME: '' }))).toMatchObject({ name: 'x' });
  });

  it('shows value names, default texts and aliases in the help', () => {
    const help = usageText('prog', TABLE);
    expect(help).toContain('  -name NAME\n    \tname (env NAME) (default "x")\n');
    expect(help).toContain('  -endpoint string\n    \tendpoint (default off)\n');
    expect(help).toContain('  -kube-api-qps float\n    \tqps (also -kube-client-qps) (default 5)\n');
    expect(flagDefaultText({ type: 'string', default: '', usage: '' })).toBeUndefined();
    expect(flagDefaultText({ type: 'string', default: '', usage: '' }, true)).toBe('""');
    expect(flagDefaultText(TABLE.period, true)).toBe('2s');
  });
});

describe('leaseTimingProblem', () => {
  it("names the first timing out of client-go's order", () => {
    expect(leaseTimingProblem({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).toBe(
      undefined,
    );
    const lease = leaseTimingProblem({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })!;
    expect(`-${lease.flag} ${longerThan(lease, '-')}`).toBe(
      '-leader-election-lease-duration must be longer than -leader-election-renew-deadline',
    );
    const renew = leaseTimingProblem({ leaseDurationMs: 15_000, renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })!;
    expect(`${renew.flag}: ${longerThan(renew)}`).toBe(
      'leader-election-renew-deadline: must be longer than 1.2 × leader-election-retry-period',
    );
  });
});
