// Retries with a per-item back-off of your own: a failing claim or volume is retried after 1 s, 2 s, 4 s, … at
// most 5 min apart, and at most 10 retries per second start over all claims and volumes. A success starts the
// item's back-off over. Type-checked with the package; see docs/provisioner-lib.md ("Retries").
import { KubeConfig } from '@kubernetes/client-node';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  ProvisionController,
  backoffRateLimiter,
  type Provisioner,
  type RateLimiter,
} from '@kprov/provisioner-lib';

declare const provisioner: Provisioner;

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();

const controller = new ProvisionController({
  kubeConfig,
  provisionerName: 'example.com/hostpath',
  provisioner,
  rateLimiter: backoffRateLimiter({ baseMs: 1_000, maxMs: 300_000, qps: 10, burst: 100 }),
  // Give up on a claim or volume after 1 + 20 attempts (until its next change or resync); 0 retries forever.
  failedProvisionThreshold: 20,
  failedDeleteThreshold: 20,
});

// The same limiter from its parts: the worse of a per-item exponential back-off and a token bucket shared by all
// items. Any object with when(item), forget(item) and numRequeues(item) will do.
export const sameLimiter: RateLimiter<string> = new MaxOfRateLimiter<string>(
  new ItemExponentialFailureRateLimiter<string>(1_000, 300_000),
  new BucketRateLimiter<string>(10, 100),
);

const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
await controller.run(stop.signal);
