/**
 * `config.json` (with `helperPod.yaml`, `setup` and `teardown`) from a ConfigMap watched through the API, for when
 * no `--config` is given.
 *
 * @packageDocumentation
 */
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import {
  makeCoreV1Calls,
  RestClient,
  silentLogger,
  Watcher,
  withSignal,
  type Logger,
  type WatcherOptions,
} from '@kprov/provisioner-lib';
import { ConfigError } from './errors.js';
import { ConfigSourceBase, ConfigState, type ConfigSourceOptions, type SourceTexts } from './reload-core.js';

/** Upstream's default `--configmap-name`: the ConfigMap of `config.json`, `setup`, `teardown` and `helperPod.yaml`. */
export const DEFAULT_CONFIGMAP_NAME = 'local-path-config';
/** The ConfigMap key of the config. */
export const CONFIG_KEY = 'config.json';
/** The ConfigMap key of the helper-pod template. */
export const HELPER_POD_KEY = 'helperPod.yaml';
/** The ConfigMap key of the setup script. */
export const SETUP_KEY = 'setup';
/** The ConfigMap key of the teardown script. */
export const TEARDOWN_KEY = 'teardown';

/** Which ConfigMap to watch. */
export interface ConfigMapRef {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  /** Key holding `config.json`. Default {@link CONFIG_KEY}. */
  key?: string;
}

/** Options of {@link ConfigMapConfigSource}. */
export interface ConfigMapConfigSourceOptions extends ConfigSourceOptions {
  /** Passed to the {@link Watcher} (backoff, clock, idle timeout, `onRestart`). Default the watcher's. */
  watcher?: Partial<
    Pick<WatcherOptions<V1ConfigMap>, 'backoff' | 'clock' | 'idleTimeoutMs' | 'minWatchTimeoutSeconds' | 'onRestart'>
  >;
}

type WatcherEventOf<T extends V1ConfigMap> = Parameters<Parameters<Watcher<T>['run']>[0]>[0];

/**
 * The config held by ConfigMap `<namespace>/<name>`, watched through the API (a list then a watch, both with
 * `fieldSelector=metadata.name=<name>`, resumed or relisted after any disconnection by {@link Watcher}), so an edit
 * applies as soon as the watch delivers it. Upstream reads the ConfigMap once in this mode and never reloads it.
 *
 * {@link ConfigSource.current} returns the config with the ConfigMap's `helperPod.yaml`, `setup` and `teardown`
 * texts (`undefined` when absent); a change of any of them is reported as `changed` (the `config` object stays the
 * same when only those changed). They are not validated here.
 *
 * The first load fails (`start` rejects) when the ConfigMap or its key is missing or the config is invalid. Later, a
 * bad config, a missing key or a deleted ConfigMap keep the last good snapshot in force: logged, recorded as a
 * Warning Event (on the ConfigMap unless `involvedObject` says otherwise) when `recorder` is given, and reported as
 * `rejected`. JSON errors name the config `ConfigMap <namespace>/<name> key <key>`.
 */
export class ConfigMapConfigSource extends ConfigSourceBase {
  protected readonly state: ConfigState;
  private readonly logger: Logger;
  private readonly ref: Required<ConfigMapRef>;
  private readonly options: ConfigMapConfigSourceOptions;
  private readonly eventTarget: ConfigSourceOptions;
  private started = false;
  /** The ConfigMap as last seen, `undefined` when absent. */
  private object: V1ConfigMap | undefined;
  /** During a (re)list: the ConfigMap listed so far. */
  private listed: V1ConfigMap | undefined;
  /** Whether the missing key was reported already (relists and unrelated edits redeliver the same ConfigMap). */
  private missingKeyReported = false;

  constructor(ref: ConfigMapRef, options: ConfigMapConfigSourceOptions = {}) {
    super();
    this.ref = { key: CONFIG_KEY, ...ref };
    this.options = options;
    this.logger = (options.logger ?? silentLogger).child({ configMap: `${ref.namespace}/${ref.name}` });
    // The Event goes to the ConfigMap by default; its uid is filled in once known (see involved()).
    this.eventTarget = { ...options };
    this.state = new ConfigState(
      this.logger,
      this.eventTarget,
      `ConfigMap ${ref.namespace}/${ref.name} key ${this.ref.key}`,
    );
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('ConfigMapConfigSource.start: a source starts only once');
    this.started = true;
    signal.throwIfAborted();
    const { kubeConfig, namespace, name } = this.ref;
    const core = makeCoreV1Calls(kubeConfig);
    const fieldSelector = `metadata.name=${name}`;
    const watcher = new Watcher<V1ConfigMap>({
      ...this.options.watcher,
      list: (p, s) =>
        core.listNamespacedConfigMap(
          { namespace, fieldSelector, limit: p.limit, ...(p.continue === undefined ? {} : { _continue: p.continue }) },
          withSignal(s),
        ),
      watch: new RestClient(kubeConfig),
      path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`,
      fieldSelector,
      logger: this.logger,
    });
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let first: { resolve: () => void; reject: (err: unknown) => void } | undefined;
    const firstLoad = new Promise<void>((resolve, reject) => {
      first = { resolve, reject };
    });
    const onFirst = (err?: unknown): void => {
      const f = first;
      first = undefined;
      if (f === undefined) return;
      if (err === undefined) f.resolve();
      else {
        stop.abort(err);
        f.reject(err);
      }
    };
    this.done = watcher
      .run((event) => {
        if (first !== undefined) {
          try {
            if (this.handle(event)) onFirst();
          } catch (err) {
            onFirst(err);
          }
        } else this.handle(event);
      }, stop.signal)
      .finally(() => {
        signal.removeEventListener('abort', onAbort);
        onFirst(signal.reason ?? new Error('config source stopped'));
      });
    await firstLoad;
  }

  /** Applies a watcher event. Returns true once a first config is loaded; throws the ConfigError of a failed first load. */
  private handle(event: WatcherEventOf<V1ConfigMap>): boolean {
    switch (event.type) {
      case 'Init':
        this.listed = undefined;
        return false;
      case 'InitApply':
        if (event.object.metadata?.name === this.ref.name) this.listed = event.object;
        return false;
      case 'InitDone':
        if (this.listed === undefined) this.gone('not found after a relist');
        else this.seen(this.listed);
        this.listed = undefined;
        return this.state.loaded;
      case 'Apply':
        if (event.object.metadata?.name === this.ref.name) this.seen(event.object);
        return this.state.loaded;
      case 'Delete':
        if (event.object.metadata?.name === this.ref.name) this.gone('deleted');
        return this.state.loaded;
    }
  }

  private involve(object: V1ConfigMap): void {
    if (this.options.involvedObject !== undefined) return;
    this.eventTarget.involvedObject = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      namespace: this.ref.namespace,
      name: this.ref.name,
      ...(object.metadata?.uid === undefined ? {} : { uid: object.metadata.uid }),
      ...(object.metadata?.resourceVersion === undefined ? {} : { resourceVersion: object.metadata.resourceVersion }),
    };
  }

  private seen(object: V1ConfigMap): void {
    this.object = object;
    this.involve(object);
    const data = object.data ?? {};
    const text = data[this.ref.key];
    if (text === undefined) {
      const err = new ConfigError(
        'no-config',
        `${this.ref.key} is not exist in local-path-config ConfigMap`,
        `add key "${this.ref.key}" to ConfigMap ${this.ref.namespace}/${this.ref.name}`,
      );
      if (!this.state.loaded) throw this.startError(err.message, err);
      if (!this.missingKeyReported) this.state.reject(err, true);
      this.missingKeyReported = true;
      return;
    }
    this.missingKeyReported = false;
    const texts: SourceTexts = {
      text,
      helperPodYaml: data[HELPER_POD_KEY],
      setup: data[SETUP_KEY],
      teardown: data[TEARDOWN_KEY],
    };
    if (this.state.loaded) this.state.offer(texts);
    else this.state.initial(texts);
  }

  private gone(how: string): void {
    const { namespace, name } = this.ref;
    if (!this.state.loaded) {
      throw this.startError(`configmaps "${name}" not found`);
    }
    if (this.object === undefined) return; // already reported
    this.object = undefined;
    this.missingKeyReported = false;
    this.state.reject(
      new ConfigError(
        'no-config',
        `ConfigMap ${namespace}/${name} ${how}`,
        `recreate ConfigMap ${namespace}/${name}; the last valid config stays in force until then`,
      ),
      true,
    );
  }

  /** Upstream's start-up error when the config cannot be had from the ConfigMap. */
  private startError(reason: string, cause?: unknown): ConfigError {
    const { namespace, name } = this.ref;
    return new ConfigError(
      'no-config',
      `invalid empty flag config and it also does not exist at ConfigMap ${namespace}/${name} with err: ${reason}`,
      `create ConfigMap ${namespace}/${name} with key "${this.ref.key}", or pass --config`,
      cause === undefined ? undefined : { cause },
    );
  }
}
