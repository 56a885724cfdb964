import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TIMINGS,
  LeaderElectionConfigError,
  defaultIdentity,
  defaultNamespace,
  leaseName,
  resolveTimings,
  validateLeaderElectionConfig,
} from '../../src/leaderelection/config.js';

const valid = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, identity: 'me' };

describe('validateLeaderElectionConfig', () => {
  it('accepts the Go defaults', () => {
    expect(() => validateLeaderElectionConfig(valid)).not.toThrow();
  });

  it.each([
    [
      { leaseDurationMs: 10_000 },
      'leaseDurationMs must be greater than renewDeadlineMs (got leaseDurationMs 10000 <= renewDeadlineMs 10000)',
    ],
    [
      { retryPeriodMs: 9_000 },
      'renewDeadlineMs must be greater than 1.2 × retryPeriodMs (got renewDeadlineMs 10000 <= 10800)',
    ],
    [{ leaseDurationMs: 0 }, 'leaseDurationMs must be a finite number greater than zero (got 0)'],
    [{ renewDeadlineMs: -1 }, 'renewDeadlineMs must be a finite number greater than zero (got -1)'],
    [{ retryPeriodMs: Number.NaN }, 'retryPeriodMs must be a finite number greater than zero (got NaN)'],
    [{ identity: '' }, 'identity must not be empty'],
    [{ identity: '  ' }, 'identity must not be empty'],
  ])('rejects %o with a clear message', (change, message) => {
    const call = (): void => validateLeaderElectionConfig({ ...valid, ...change });
    expect(call).toThrow(LeaderElectionConfigError);
    expect(call).toThrow(message);
  });

  it('requires renewDeadline strictly greater than 1.2 × retryPeriod', () => {
    expect(() => validateLeaderElectionConfig({ ...valid, renewDeadlineMs: 2_400 })).toThrow(LeaderElectionConfigError);
    expect(() => validateLeaderElectionConfig({ ...valid, renewDeadlineMs: 2_401 })).not.toThrow();
  });
});

describe('resolveTimings', () => {
  it('defaults to 15 s / 10 s / 2 s, the Go provisioner library values', () => {
    expect(resolveTimings({}, 'me')).toEqual({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
    });
    expect(DEFAULT_TIMINGS).toEqual({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
  });

  it('validates the merged result', () => {
    expect(() => resolveTimings({ renewDeadlineMs: 20_000 }, 'me')).toThrow(
      'leaseDurationMs must be greater than renewDeadlineMs',
    );
    expect(resolveTimings({ leaseDurationMs: 300, renewDeadlineMs: 200, retryPeriodMs: 50 }, 'me').retryPeriodMs).toBe(
      50,
    );
  });
});

describe('leaseName', () => {
  it('replaces every / with -, as the Go library does', () => {
    expect(leaseName('example.com/hostpath')).toBe('example.com-hostpath');
    expect(leaseName('a/b/c')).toBe('a-b-c');
    expect(leaseName('rancher.io/local-path')).toBe('rancher.io-local-path');
  });

  it.each(['Example.com/Foo', 'example.com/my_prov', '', '/leading', 'trailing/', 'x'.repeat(254)])(
    'rejects %j, which is not a valid object name',
    (name) => {
      expect(() => leaseName(name)).toThrow(LeaderElectionConfigError);
      expect(() => leaseName(name)).toThrow('is not a valid object name');
    },
  );

  it('names the provisioner and the derived name in the message', () => {
    expect(() => leaseName('Example.com/Foo')).toThrow(
      'cannot use provisioner name "Example.com/Foo" for leader election: the Lease name "Example.com-Foo" is not a valid object name',
    );
  });
});

describe('defaultIdentity', () => {
  it('is hostname_uuid and unique per call', () => {
    const a = defaultIdentity();
    expect(a.startsWith(`${hostname()}_`)).toBe(true);
    expect(a.slice(hostname().length + 1)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(defaultIdentity()).not.toBe(a);
  });
});

describe('defaultNamespace', () => {
  it('prefers POD_NAMESPACE, then the service account file, then default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kprov-ns-'));
    try {
      const file = join(dir, 'namespace');
      writeFileSync(file, 'from-file\n');
      expect(defaultNamespace({ env: { POD_NAMESPACE: 'from-env' }, namespaceFile: file })).toBe('from-env');
      expect(defaultNamespace({ env: { POD_NAMESPACE: '' }, namespaceFile: file })).toBe('from-file');
      expect(defaultNamespace({ env: {}, namespaceFile: join(dir, 'missing') })).toBe('default');
      writeFileSync(file, '  \n');
      expect(defaultNamespace({ env: {}, namespaceFile: file })).toBe('default');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
