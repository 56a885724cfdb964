/**
 * What may differ between two servers that behave the same, and is replaced before comparing:
 *
 * - uids, and every string that embeds one (`pvc-<uid>` volume names): each distinct uid becomes `<uid-N>` in order
 *   of first appearance, so that which fields name the same object still counts;
 * - resourceVersions: likewise `<rv-N>`, so that "the event names the claim's version after the annotation" still
 *   counts while the numbers themselves (one etcd revision per write, including the writes of every controller) do
 *   not;
 * - timestamps (RFC 3339 strings) become `<time>`; `null` stays `null`, as Go's zero `metav1.Time` is serialised;
 * - names made from `generateName` keep the prefix; Event names keep the object's name (`<name>.<hex time>`);
 * - `managedFields`: the testkit does not track field ownership (see the known differences), so it is dropped;
 * - kubectl's AGE and LAST SEEN columns become `<age>`, and runs of spaces one, since column widths follow them.
 */

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const EVENT_NAME = /^(.+)\.[0-9a-f]{15,17}$/;

/** Replaces identifiers consistently within one case: the same uid or resourceVersion always gets the same token. */
export class Canon {
  private readonly uids = new Map<string, string>();
  private readonly rvs = new Map<string, string>();

  uid(value: string): string {
    return value.replace(UUID, (u) => {
      let t = this.uids.get(u);
      if (t === undefined) {
        t = `<uid-${this.uids.size + 1}>`;
        this.uids.set(u, t);
      }
      return t;
    });
  }

  rv(value: string): string {
    if (value === '' || value === '0') return value;
    let t = this.rvs.get(value);
    if (t === undefined) {
      t = `<rv-${this.rvs.size + 1}>`;
      this.rvs.set(value, t);
    }
    return t;
  }

  /** A JSON value with uids, resourceVersions, timestamps, generated names and managedFields replaced. */
  json(value: unknown): unknown {
    return this.walk(value, undefined);
  }

  private walk(value: unknown, key: string | undefined): unknown {
    if (Array.isArray(value)) return value.map((v) => this.walk(v, undefined));
    if (value !== null && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      const generateName = typeof o.generateName === 'string' ? o.generateName : undefined;
      for (const [k, v] of Object.entries(o)) {
        if (k === 'managedFields') continue;
        if (k === 'name' && typeof v === 'string' && generateName !== undefined && v.startsWith(generateName)) {
          out[k] = `${generateName}<generated>`;
          continue;
        }
        out[k] = this.walk(v, k);
      }
      return out;
    }
    if (typeof value === 'string') {
      if (key === 'resourceVersion') return this.rv(value);
      if (RFC3339.test(value)) return '<time>';
      const event = key === 'name' ? EVENT_NAME.exec(value) : null;
      if (event !== null) return `${this.uid(event[1] ?? '')}.<hex>`;
      return this.uid(value);
    }
    return value;
  }
}

/** Normalises one JSON value with a fresh {@link Canon}. */
export function normaliseJson(value: unknown): unknown {
  return new Canon().json(value);
}

const AGE = /^(<invalid>|\d+y|(\d+d)?(\d+h)?(\d+m)?(\d+s)?)$/;

/** kubectl's table text with ages and column widths taken out. */
export function normaliseTable(text: string): string[] {
  return text
    .trimEnd()
    .split('\n')
    .map((line) =>
      line
        .split(/ {2,}/)
        .map((cell) => (cell !== '' && AGE.test(cell) ? '<age>' : cell))
        .join(' | ')
        .trimEnd(),
    );
}

/**
 * A pod without the ServiceAccount admission plugin's token volume (`kube-api-access-*`) and its mounts: the real
 * server adds it once kube-controller-manager has made the namespace's `default` ServiceAccount; the testkit does not
 * (see the known differences). This build also adds a service CA projection to it, which goes with it.
 */
export function withoutTokenVolume(pod: unknown): unknown {
  if (pod === null || typeof pod !== 'object') return pod;
  const p = structuredClone(pod) as {
    spec?: {
      volumes?: { name: string }[];
      containers?: { volumeMounts?: { name: string }[] }[];
      initContainers?: { volumeMounts?: { name: string }[] }[];
    };
  };
  const spec = p.spec;
  if (spec === undefined) return p;
  const token = (name: string): boolean => name.startsWith('kube-api-access-');
  if (spec.volumes !== undefined) {
    spec.volumes = spec.volumes.filter((v) => !token(v.name));
    if (spec.volumes.length === 0) delete spec.volumes;
  }
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    if (c.volumeMounts === undefined) continue;
    c.volumeMounts = c.volumeMounts.filter((m) => !token(m.name));
    if (c.volumeMounts.length === 0) delete c.volumeMounts;
  }
  return p;
}
