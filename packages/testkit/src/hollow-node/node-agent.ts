/**
 * One node kept alive as a kubelet keeps it (`pkg/kubelet/kubelet_node_status.go`, `nodelease`): registered by
 * creating its Node (or, when one exists, taking it over: our labels merged in, our status written), its Lease in
 * `kube-node-lease` renewed every quarter of its duration (10 s for the default 40 s, as the kubelet), and its status
 * posted again every `statusReportMs` with fresh heartbeat times. kube-controller-manager's node lifecycle
 * controller marks a node whose Lease and heartbeat are both older than 40 s NotReady (Unknown), taints it and
 * eventually evicts its pods.
 */
import type { KubeObject } from '../api/objects.js';
import { waitFor } from '../process/wait-for.js';
import { TAINT_NOT_READY } from '../sim/annotations.js';
import { hasCode } from '../sim/kubelet/cluster.js';
import type { Condition, Node } from '../sim/types.js';
import { timestamp } from '../store/store.js';
import type { JsonObject, RestClient } from '../client/rest.js';

/** Taint the node lifecycle controller puts on a node whose Ready condition is Unknown. */
const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

/** Options of {@link NodeAgent}. */
export interface NodeAgentOptions {
  rest: RestClient;
  /** The Node to register, as `nodeObject` builds it; its status is what every status post reports. */
  node: KubeObject;
  /** `spec.leaseDurationSeconds` of the node's Lease, renewed every quarter of it. */
  leaseDurationSeconds: number;
  /** Interval of the status posts, in ms. */
  statusReportMs: number;
  /** Told about every Node object read or written. */
  onNode: (node: KubeObject) => void;
  /** Told about failed renewals and posts (they are tried again at the next tick). */
  onError: (error: unknown, context: string) => void;
}

/** `metav1.MicroTime` as the API server wants it: six fractional digits. */
function microTime(date = new Date()): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

/** Keeps one node registered and alive; see the module comment. */
export class NodeAgent {
  private readonly name: string;
  private readonly path: string;
  private uid: string | undefined;
  private lease: JsonObject | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: NodeAgentOptions) {
    this.name = options.node.metadata.name ?? '';
    this.path = `/api/v1/nodes/${encodeURIComponent(this.name)}`;
  }

  /** Creates the Node, or takes an existing one over, and renews its Lease once. */
  async register(): Promise<void> {
    const { rest, node } = this.options;
    let current: JsonObject;
    try {
      current = await rest.request('POST', '/api/v1/nodes', { body: node });
    } catch (err) {
      if (!hasCode(err, 409)) throw err;
      const existing = await rest.request('GET', this.path);
      const meta = view(existing).metadata;
      const labels = { ...meta.labels, ...node.metadata.labels };
      const annotations = { ...meta.annotations, ...node.metadata.annotations };
      current = await rest.request('PUT', this.path, {
        body: { ...existing, metadata: { ...meta, labels, annotations } },
      });
      current = await this.postStatus(current);
    }
    this.uid = view(current).metadata.uid;
    this.options.onNode(view(current));
    await this.renewLease();
  }

  /** Starts the Lease renewals and status posts. */
  start(): void {
    const every = (ms: number, what: string, run: () => Promise<unknown>): void => {
      let busy = false;
      const t = setInterval(() => {
        if (busy) return;
        busy = true;
        const p = run()
          .then(() => undefined)
          .catch((err: unknown) => this.options.onError(err, `${what} ${this.name}`))
          .finally(() => {
            busy = false;
            this.inFlight.delete(p);
          });
        this.inFlight.add(p);
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    every((this.options.leaseDurationSeconds * 1000) / 4, 'lease renewal of node', () => this.renewLease());
    every(this.options.statusReportMs, 'status post of node', async () =>
      this.postStatus(await this.options.rest.request('GET', this.path)),
    );
  }

  /** Stops renewing; resolves once a renewal or post in flight is over. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    await Promise.all([...this.inFlight]);
  }

  /**
   * Waits until the node has neither the not-ready nor the unreachable taint: the TaintNodesByCondition admission
   * plugin puts `node.kubernetes.io/not-ready:NoSchedule` on every new Node, and only the node lifecycle controller
   * (kube-controller-manager) takes it off once it sees the node Ready.
   */
  async waitSchedulable(timeoutMs: number): Promise<void> {
    const what = `node ${this.name} to lose its ${TAINT_NOT_READY} taint (does kube-controller-manager run its node lifecycle controller?)`;
    await waitFor(
      what,
      async () => {
        const node = view(await this.options.rest.request('GET', this.path));
        this.options.onNode(node);
        const taints = node.spec?.taints ?? [];
        return taints.some((t) => t.key === TAINT_NOT_READY || t.key === TAINT_UNREACHABLE) ? undefined : true;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /** Writes our status over `current`'s, heartbeat times now, transition times kept where a condition did not change. */
  private async postStatus(current: JsonObject): Promise<JsonObject> {
    const now = timestamp();
    const ours = view(this.options.node).status ?? {};
    const old = view(current).status?.conditions ?? [];
    const conditions = (ours.conditions ?? []).map((c): Condition => {
      const before = old.find((o) => o.type === c.type);
      return {
        ...c,
        lastHeartbeatTime: now,
        lastTransitionTime: before?.status === c.status ? (before.lastTransitionTime ?? now) : now,
      };
    });
    const status = { ...view(current).status, ...ours, conditions };
    const written = await this.options.rest.request('PUT', `${this.path}/status`, { body: { ...current, status } });
    this.options.onNode(view(written));
    return written;
  }

  /** Renews the Lease, creating it (owned by the Node) when there is none. */
  private async renewLease(): Promise<void> {
    const { rest, leaseDurationSeconds } = this.options;
    const spec = { holderIdentity: this.name, leaseDurationSeconds, renewTime: microTime() };
    const path = `${LEASES}/${encodeURIComponent(this.name)}`;
    if (this.lease !== undefined) {
      try {
        this.lease = await rest.request('PUT', path, {
          body: { ...this.lease, spec: { ...(this.lease.spec as object), ...spec } },
        });
        return;
      } catch (err) {
        if (!hasCode(err, 404, 409)) throw err;
      }
    }
    try {
      const existing = await rest.request('GET', path);
      this.lease = await rest.request('PUT', path, {
        body: { ...existing, spec: { ...(existing.spec as object), ...spec } },
      });
    } catch (err) {
      if (!hasCode(err, 404)) throw err;
      const ownerReferences =
        this.uid === undefined ? [] : [{ apiVersion: 'v1', kind: 'Node', name: this.name, uid: this.uid }];
      const metadata = { name: this.name, namespace: 'kube-node-lease', ownerReferences };
      this.lease = await rest.request('POST', LEASES, {
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec },
      });
    }
  }
}

function view(obj: JsonObject): Node {
  return obj as unknown as Node;
}
