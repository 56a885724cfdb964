/**
 * ProvisionController construction: option validation (clear errors at construction, where the Go library would
 * log and exit), the defaults of the Go library (DEFAULTS, reference 1.6) and the classic-guide aliases.
 * Controllers are only constructed, never run; the KubeConfig points at a server that is never contacted.
 */
import { KubeConfig, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Informer, informerFor } from '../../src/cache/informer.js';
import { resourceSpec } from '../../src/cache/resources.js';
import { ProvisionController } from '../../src/controller/controller.js';
import { internalsOf } from '../../src/controller/internals.js';
import { DEFAULTS, type ProvisionControllerOptions, type ResolvedOptions } from '../../src/controller/options.js';
import type { Provisioner } from '../../src/controller/provisioner.js';
import { ItemExponentialFailureRateLimiter } from '../../src/workqueue/rate-limiters.js';
import { PROVISIONER, testProvisioner } from './fixtures.js';

function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'test', token: 'unused' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'test' }],
    currentContext: 'test',
  });
  return kc;
}

function make(options: Partial<ProvisionControllerOptions> = {}): ProvisionController {
  return new ProvisionController({
    kubeConfig: kubeConfig(),
    provisionerName: PROVISIONER,
    provisioner: testProvisioner(),
    ...options,
  });
}

/** The options with the defaults filled in, as the controller resolved them. */
function optionsOf(controller: ProvisionController): ResolvedOptions {
  return internalsOf(controller).options;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('ProvisionController options: defaults', () => {
  it('DEFAULTS are the Go library defaults', () => {
    expect(DEFAULTS).toEqual({
      resyncPeriodMs: 15 * 60 * 1000,
      threadiness: 4,
      exponentialBackOffOnError: true,
      createProvisionedPVRetryCount: 5,
      createProvisionedPVIntervalMs: 10_000,
      failedProvisionThreshold: 15,
      failedDeleteThreshold: 15,
      leaderElection: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: false,
      retryIntervalMaxMs: 5 * 60 * 1000,
      addFinalizer: false,
    });
  });

  it('a controller built without options uses them', () => {
    const c = make();
    expect(optionsOf(c)).toMatchObject({
      resyncPeriodMs: 900_000,
      threadiness: 4,
      exponentialBackOffOnError: true,
      createProvisionedPVRetryCount: 5,
      createProvisionedPVIntervalMs: 10_000,
      failedProvisionThreshold: 15,
      failedDeleteThreshold: 15,
      leaderElection: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: false,
      retryIntervalMaxMs: 300_000,
      addFinalizer: false,
      additionalProvisionerNames: [],
      provisionTimeoutMs: 0,
      deletionTimeoutMs: 0,
    });
    expect(optionsOf(c).rateLimiter).toBeUndefined();
    expect(optionsOf(c).createProvisionedPVLimiter).toBeUndefined();
    expect(c.hasRun()).toBe(false);
  });

  it('a createProvisionedPVRetryCount of 0 means the default 5 attempts, as in Go', () => {
    expect(optionsOf(make({ createProvisionedPVRetryCount: 0 })).createProvisionedPVRetryCount).toBe(5);
    expect(optionsOf(make({ createProvisionedPVRetryCount: 1 })).createProvisionedPVRetryCount).toBe(1);
  });

  it('the PV name defaults to pvc-<claim uid>', () => {
    const claim: V1PersistentVolumeClaim = { metadata: { name: 'claim-1', namespace: 'default', uid: 'uid-1-1' } };
    expect(optionsOf(make()).volumeName(claim)).toBe('pvc-uid-1-1');
  });

  it('the identity defaults to <hostname>_<uuid>, unique per controller', () => {
    const a = optionsOf(make()).identity;
    const b = optionsOf(make()).identity;
    expect(a).toMatch(/^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    expect(optionsOf(make({ identity: 'me' })).identity).toBe('me');
  });

  it('the Lease namespace defaults to POD_NAMESPACE, and the option wins', () => {
    vi.stubEnv('POD_NAMESPACE', 'provisioners');
    expect(optionsOf(make()).leaderElectionNamespace).toBe('provisioners');
    expect(optionsOf(make({ leaderElectionNamespace: 'kube-system' })).leaderElectionNamespace).toBe('kube-system');
  });

  it('explicit options replace the defaults', () => {
    const c = make({
      resyncPeriodMs: 1_000,
      threadiness: 2,
      failedProvisionThreshold: 0,
      failedDeleteThreshold: 3,
      addFinalizer: true,
    });
    expect(optionsOf(c)).toMatchObject({
      resyncPeriodMs: 1_000,
      threadiness: 2,
      failedProvisionThreshold: 0,
      failedDeleteThreshold: 3,
      addFinalizer: true,
    });
  });

  it('accepts CSI driver style names and additional names', () => {
    const c = make({ provisionerName: 'hostpath.csi.k8s.io', additionalProvisionerNames: ['kubernetes.io/aws-ebs'] });
    expect(optionsOf(c).provisionerName).toBe('hostpath.csi.k8s.io');
    expect(optionsOf(c).additionalProvisionerNames).toEqual(['kubernetes.io/aws-ebs']);
  });
});

describe('ProvisionController options: classic-guide aliases', () => {
  it('failedRetryThreshold sets both thresholds', () => {
    expect(optionsOf(make({ failedRetryThreshold: 3 }))).toMatchObject({
      failedProvisionThreshold: 3,
      failedDeleteThreshold: 3,
    });
  });

  it('failedRetryThreshold 0 means retry forever for both', () => {
    expect(optionsOf(make({ failedRetryThreshold: 0 }))).toMatchObject({
      failedProvisionThreshold: 0,
      failedDeleteThreshold: 0,
    });
  });

  it('the specific thresholds win over failedRetryThreshold', () => {
    expect(optionsOf(make({ failedRetryThreshold: 3, failedDeleteThreshold: 7 }))).toMatchObject({
      failedProvisionThreshold: 3,
      failedDeleteThreshold: 7,
    });
  });

  it('leasePeriodMs is leaseDurationMs', () => {
    expect(optionsOf(make({ leasePeriodMs: 30_000 })).leaseDurationMs).toBe(30_000);
    expect(optionsOf(make({ leasePeriodMs: 30_000, leaseDurationMs: 20_000 })).leaseDurationMs).toBe(20_000);
  });

  it('leasePeriodMs is validated as the lease duration', () => {
    expect(() => make({ leasePeriodMs: 10_000 })).toThrow(
      'leaseDurationMs (10000) must be greater than renewDeadlineMs (10000)',
    );
  });

  it('termLimitMs is accepted and has no effect', () => {
    const shared = { kubeConfig: kubeConfig(), provisioner: testProvisioner(), identity: 'x' };
    const with_ = make({ ...shared, termLimitMs: 60_000 });
    const without = make(shared);
    expect({ ...optionsOf(with_), volumeName: undefined }).toEqual({ ...optionsOf(without), volumeName: undefined });
    expect(optionsOf(with_)).not.toHaveProperty('termLimitMs');
  });
});

describe('ProvisionController options: construction errors', () => {
  it('renewDeadline >= leaseDuration', () => {
    expect(() => make({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(RangeError);
    expect(() => make({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(
      'ProvisionController: leaseDurationMs (10000) must be greater than renewDeadlineMs (10000)',
    );
    expect(() => make({ leaseDurationMs: 5_000 })).toThrow(
      'leaseDurationMs (5000) must be greater than renewDeadlineMs (10000)',
    );
  });

  it('renewDeadline <= 1.2 × retryPeriod', () => {
    expect(() => make({ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toThrow(RangeError);
    expect(() => make({ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toThrow(
      'ProvisionController: renewDeadlineMs (2400) must be greater than 1.2 × retryPeriodMs (2000)',
    );
    expect(() => make({ renewDeadlineMs: 2_401, retryPeriodMs: 2_000 })).not.toThrow();
    expect(() => make({ retryPeriodMs: 0 })).toThrow('retryPeriodMs > 0');
  });

  it('leader election timings are not checked when leader election is off (Go checks them in Run, with the elector)', () => {
    expect(() => make({ leaderElection: false, leaseDurationMs: 1_000, renewDeadlineMs: 10_000 })).not.toThrow();
  });

  it('negative thresholds', () => {
    expect(() => make({ failedProvisionThreshold: -1 })).toThrow(RangeError);
    expect(() => make({ failedProvisionThreshold: -1 })).toThrow(
      'ProvisionController: failedProvisionThreshold must be a number >= 0, got -1',
    );
    expect(() => make({ failedDeleteThreshold: -1 })).toThrow(
      'ProvisionController: failedDeleteThreshold must be a number >= 0, got -1',
    );
    expect(() => make({ failedRetryThreshold: -2 })).toThrow(
      'ProvisionController: failedRetryThreshold must be a number >= 0, got -2',
    );
  });

  it('other negative or non-finite durations and counts', () => {
    expect(() => make({ resyncPeriodMs: -1 })).toThrow('resyncPeriodMs must be a number >= 0, got -1');
    expect(() => make({ retryIntervalMaxMs: -1 })).toThrow('retryIntervalMaxMs must be a number >= 0, got -1');
    expect(() => make({ provisionTimeoutMs: Number.NaN })).toThrow('provisionTimeoutMs must be a number >= 0, got NaN');
    expect(() => make({ deletionTimeoutMs: Number.POSITIVE_INFINITY })).toThrow(
      'deletionTimeoutMs must be a number >= 0, got Infinity',
    );
    expect(() => make({ createProvisionedPVRetryCount: -1 })).toThrow(
      'createProvisionedPVRetryCount must be a number >= 0, got -1',
    );
    expect(() => make({ createProvisionedPVIntervalMs: -1 })).toThrow(
      'createProvisionedPVIntervalMs must be a number >= 0, got -1',
    );
  });

  it('empty provisioner name', () => {
    expect(() => make({ provisionerName: '' })).toThrow(TypeError);
    expect(() => make({ provisionerName: '' })).toThrow(
      'ProvisionController: provisionerName is required, e.g. "example.com/hostpath"',
    );
  });

  it('a provisioner name without vendor/name form', () => {
    expect(() => make({ provisionerName: 'hostpath' })).toThrow(TypeError);
    expect(() => make({ provisionerName: 'hostpath' })).toThrow(
      'ProvisionController: provisionerName "hostpath" must have the form <vendor domain>/<name>, e.g. "example.com/hostpath"',
    );
    expect(() => make({ provisionerName: 'Example.com/hostpath' })).toThrow(
      'must have the form <vendor domain>/<name>',
    );
    expect(() => make({ provisionerName: 'example.com/' })).toThrow('must have the form <vendor domain>/<name>');
    expect(() => make({ provisionerName: 'a/b/c' })).toThrow('must have the form <vendor domain>/<name>');
  });

  it('an additional provisioner name without vendor/name form', () => {
    expect(() => make({ additionalProvisionerNames: ['foo.xyz/baz', 'hostpath'] })).toThrow(
      'ProvisionController: additional provisioner name "hostpath" must have the form <vendor domain>/<name>',
    );
  });

  it('non-integer threadiness', () => {
    expect(() => make({ threadiness: 1.5 })).toThrow(RangeError);
    expect(() => make({ threadiness: 1.5 })).toThrow(
      'ProvisionController: threadiness must be a whole number >= 1, got 1.5',
    );
    expect(() => make({ threadiness: 0 })).toThrow('threadiness must be a whole number >= 1, got 0');
    expect(() => make({ threadiness: Number.NaN })).toThrow('threadiness must be a whole number >= 1, got NaN');
  });

  it('Lease labels the API server would refuse', () => {
    expect(() => make({ leaderElectionLabels: { 'team/a/b': 'x' } })).toThrow(
      'ProvisionController: leaderElectionLabels: label key "team/a/b": the prefix before "/" must be a DNS subdomain',
    );
    expect(() => make({ leaderElectionLabels: { team: '-x' } })).toThrow(
      'ProvisionController: leaderElectionLabels: label value "-x" of "team": must be at most 63 characters',
    );
    expect(() => make({ leaderElectionLabels: { 'example.com/team': 'storage', empty: '' } })).not.toThrow();
  });

  it('createProvisionedPVLimiter with retry count or interval', () => {
    const limiter = new ItemExponentialFailureRateLimiter<string>(1, 1_000);
    expect(() => make({ createProvisionedPVLimiter: limiter, createProvisionedPVRetryCount: 3 })).toThrow(
      'ProvisionController: createProvisionedPVLimiter cannot be used together with createProvisionedPVRetryCount',
    );
    expect(() => make({ createProvisionedPVLimiter: limiter, createProvisionedPVIntervalMs: 100 })).toThrow(
      'ProvisionController: createProvisionedPVLimiter cannot be used together with createProvisionedPVIntervalMs',
    );
    expect(optionsOf(make({ createProvisionedPVLimiter: limiter })).createProvisionedPVLimiter).toBe(limiter);
  });

  it('a missing or incomplete provisioner', () => {
    const noDelete = { provision: async () => ({ volume: {} }) } as unknown as Provisioner;
    expect(() => make({ provisioner: noDelete })).toThrow(
      'ProvisionController: provisioner must implement provision(options, signal) and delete(volume, signal)',
    );
    expect(() => make({ provisioner: undefined as unknown as Provisioner })).toThrow(TypeError);
  });

  it('a missing kubeConfig', () => {
    expect(() => make({ kubeConfig: undefined as unknown as KubeConfig })).toThrow(
      'ProvisionController: kubeConfig is required',
    );
  });

  it('a claim informer without the uid index the workers look claims up by', () => {
    const kc = kubeConfig();
    const { list, watch, path, decode } = resourceSpec(kc, 'PersistentVolumeClaim');
    const bare = new Informer<V1PersistentVolumeClaim>({ list, watch, path, decode });
    expect(() => make({ claimsInformer: bare })).toThrow(
      'ProvisionController: claimsInformer must have the "uid" index (informerFor(kubeConfig, "PersistentVolumeClaim") has it)',
    );
    expect(() => make({ claimsInformer: informerFor(kc, 'PersistentVolumeClaim') })).not.toThrow();
  });
});

describe('ProvisionController options: Lease name', () => {
  it('refuses at construction a provisioner name that cannot become a Lease name, when leader election is on', () => {
    expect(() => make({ provisionerName: 'example.com/My_Prov' })).toThrow(/example\.com\/My_Prov/);
    expect(() => make({ provisionerName: 'example.com/My_Prov', leaderElection: false })).not.toThrow();
  });
});
