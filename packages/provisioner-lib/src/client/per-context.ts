/** Values kept per KubeConfig and current context, such as the connection pools the library's clients share. */
import type { KubeConfigView } from './connection.js';

/**
 * What tells a KubeConfig's current context apart for a connection pool: the context's name, its cluster's name and
 * server, and its user's name.
 */
function contextKey(kc: KubeConfigView): string {
  const cluster = kc.getCurrentCluster();
  return JSON.stringify([
    kc.getCurrentContext(),
    cluster?.name ?? '',
    cluster?.server ?? '',
    kc.getCurrentUser()?.name ?? '',
  ]);
}

/**
 * One value per KubeConfig and current context, made by `make` on first use and kept while the KubeConfig lives
 * (a WeakMap): a KubeConfig switched to another context gets another value.
 */
export class PerContext<T, K extends KubeConfigView = KubeConfigView> {
  private readonly byConfig = new WeakMap<K, Map<string, T>>();

  constructor(private readonly make: (kc: K) => T) {}

  /** The value for the current context of `kc`, made now if there is none yet. */
  get(kc: K): T {
    let perContext = this.byConfig.get(kc);
    if (perContext === undefined) {
      perContext = new Map();
      this.byConfig.set(kc, perContext);
    }
    const key = contextKey(kc);
    let value = perContext.get(key);
    if (value === undefined) {
      value = this.make(kc);
      perContext.set(key, value);
    }
    return value;
  }

  /** Forgets the values of `kc`, every context's, and returns them (none made). */
  take(kc: K): T[] {
    const values = [...(this.byConfig.get(kc)?.values() ?? [])];
    this.byConfig.delete(kc);
    return values;
  }
}
