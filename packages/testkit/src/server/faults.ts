import {
  conflict,
  internalError,
  serviceUnavailable,
  StatusError,
  tooManyRequests,
  resourceExpired,
} from '../api/status.js';
import type { ResourceType, Verb } from '../api/resources.js';

/** What a fault does to a matching request. */
export type FaultAction =
  /**
   * Answer with an error Status: 500 InternalError, 503 ServiceUnavailable, 429 TooManyRequests (with Retry-After),
   * 409 Conflict, 410 Gone, or 403 Forbidden (as RBAC denies a request).
   */
  | { type: 'error'; code: 500 | 503 | 429 | 409 | 410 | 403; retryAfterSeconds?: number }
  /** Delay the request by `ms` before handling it normally. */
  | { type: 'latency'; ms: number };

/** Which requests a fault applies to, and how often. */
export interface FaultRule {
  /** Verb to match (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`); default every verb. */
  verb?: Verb | readonly Verb[];
  /** Resource plural (`persistentvolumes`) or key (`storage.k8s.io/storageclasses`); default every resource. */
  resource?: string | readonly string[];
  /** Only requests to the `status` subresource (`'status'`), or only main-resource requests (`''`). Default both. */
  subresource?: string;
  action: FaultAction;
  /** Fraction of matching requests hit, 0 to 1. Default 1. */
  rate?: number;
  /** Hit at most this many requests, then the rule retires. Default unlimited. */
  count?: number;
}

/** A request as the fault injector sees it. */
export interface FaultRequest {
  verb: Verb;
  resource: ResourceType;
  subresource?: string;
  name?: string;
}

interface ActiveRule extends FaultRule {
  id: number;
  hits: number;
}

function matches<T>(want: T | readonly T[] | undefined, value: T): boolean {
  if (want === undefined) return true;
  return Array.isArray(want) ? (want as readonly T[]).includes(value) : want === value;
}

/**
 * Fault injection for requests: error responses and latency per verb and resource, as a rate or a count.
 * Watch-level faults (dropping connections, forcing 410) live on the server, which owns the connections.
 */
export class FaultInjector {
  private rules: ActiveRule[] = [];
  private nextId = 1;
  /** Random source; replace for deterministic tests. */
  random: () => number = Math.random;

  /** Adds a rule; returns a function that removes it. */
  add(rule: FaultRule): () => void {
    const active: ActiveRule = { ...rule, id: this.nextId++, hits: 0 };
    this.rules.push(active);
    return () => {
      this.rules = this.rules.filter((r) => r.id !== active.id);
    };
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  /** How many requests each rule has hit so far, in the order they were added. */
  hits(): number[] {
    return this.rules.map((r) => r.hits);
  }

  /** Picks the actions for a request: latency first, then at most one error. */
  decide(req: FaultRequest): { latencyMs: number; error?: StatusError } {
    let latencyMs = 0;
    let error: StatusError | undefined;
    for (const rule of this.rules) {
      if (!matches(rule.verb, req.verb)) continue;
      const keyed = req.resource.group === '' ? req.resource.plural : `${req.resource.group}/${req.resource.plural}`;
      if (rule.resource !== undefined && !matches(rule.resource, req.resource.plural) && !matches(rule.resource, keyed))
        continue;
      if (rule.subresource !== undefined && rule.subresource !== (req.subresource ?? '')) continue;
      if (rule.count !== undefined && rule.hits >= rule.count) continue;
      if (rule.action.type === 'error' && error !== undefined) continue;
      if (this.random() >= (rule.rate ?? 1)) continue;
      rule.hits += 1;
      if (rule.action.type === 'latency') latencyMs += rule.action.ms;
      else error = faultError(rule.action, req);
    }
    this.rules = this.rules.filter((r) => r.count === undefined || r.hits < r.count);
    return error === undefined ? { latencyMs } : { latencyMs, error };
  }
}

function faultError(action: Extract<FaultAction, { type: 'error' }>, req: FaultRequest): StatusError {
  switch (action.code) {
    case 429:
      return tooManyRequests(action.retryAfterSeconds ?? 1);
    case 503:
      return serviceUnavailable();
    case 409:
      return conflict(
        req.resource,
        req.name ?? '',
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    case 410:
      return resourceExpired(0, 0);
    case 403: {
      const qualified =
        req.resource.group === '' ? req.resource.plural : `${req.resource.plural}.${req.resource.group}`;
      return new StatusError(
        403,
        'Forbidden',
        `${qualified}${req.name === undefined ? '' : ` "${req.name}"`} is forbidden: User "kprov-testkit" cannot ${req.verb} resource "${req.resource.plural}" in API group "${req.resource.group}"`,
        {
          ...(req.name === undefined ? {} : { name: req.name }),
          ...(req.resource.group === '' ? {} : { group: req.resource.group }),
          kind: req.resource.plural,
        },
      );
    }
    case 500:
      return internalError('injected fault');
  }
}
