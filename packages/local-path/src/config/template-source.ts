/**
 * The helper pod template (`helperPod.yaml`), kept current as `config.json` is, on the same keep-last-good rule:
 * read at start-up from `--helper-pod-file`, else from the ConfigMap (the config source's, or read once through the
 * API when the config came from a file or inline JSON, as upstream); then taken again when the ConfigMap source
 * delivers a new `helperPod.yaml` (without `--helper-pod-file`), and re-read every `pollIntervalMs` from
 * `<CONFIG_MOUNT_PATH>/helperPod.yaml` when that is set, as upstream. A template that does not parse or pass the
 * safety checks never replaces a good one: the refusal is logged and recorded as an `InvalidConfig` Event, once per
 * refused text (upstream logs an error every 30 s).
 *
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import {
  describeError,
  makeCoreV1Calls,
  realClock,
  silentLogger,
  withSignal,
  type Clock,
  type Logger,
} from '@kprov/provisioner-lib';
import { LastGood } from '@kprov/provisioner-lib/runtime';
import { ConfigMapConfigSource, HELPER_POD_KEY } from './reload-configmap.js';
import { reportRefused, type ConfigSource, type ConfigSourceOptions } from './reload-core.js';
import { DEFAULT_CONFIG_POLL_INTERVAL_MS } from './reload-file.js';

/** Options of {@link HelperPodTemplateSource}. */
export interface HelperPodTemplateSourceOptions extends ConfigSourceOptions {
  /** Parses and checks a template (e.g. `loadHelperPodTemplate` with `--allow-unsafe-helper-pod-template`). */
  readonly parse: (text: string) => V1Pod;
  /** How to reach the API server, for a ConfigMap read once. */
  readonly kubeConfig: KubeConfig;
  /** The ConfigMap's namespace (`--namespace`). */
  readonly namespace: string;
  /** `--configmap-name`. */
  readonly configMapName: string;
  /** The source of `config.json`: a `ConfigMapConfigSource` delivers the template too. */
  readonly config: ConfigSource;
  /** `--helper-pod-file`; undefined: the ConfigMap's `helperPod.yaml`. */
  readonly file?: string | undefined;
  /** `CONFIG_MOUNT_PATH`: `<it>/helperPod.yaml` is re-read; undefined: not re-read. */
  readonly mountPath?: string | undefined;
  /** How often the mounted file is re-read, in ms. Default {@link DEFAULT_CONFIG_POLL_INTERVAL_MS}; 0: never. */
  readonly pollIntervalMs?: number | undefined;
  /** Time source of the re-reads. Default the real clock. */
  readonly clock?: Clock | undefined;
}

const REFUSED = 'failed to load the new helper pod manifest; keeping the previous template';

/** The helper pod template in force; see the module. */
export class HelperPodTemplateSource {
  private readonly state: LastGood<string | undefined, V1Pod>;
  private readonly logger: Logger;

  constructor(private readonly options: HelperPodTemplateSourceOptions) {
    this.logger = options.logger ?? silentLogger;
    this.state = new LastGood({
      parse: (text) => {
        if (text === undefined) throw new Error(`${HELPER_POD_KEY} is not exist in local-path-config ConfigMap`);
        return options.parse(text);
      },
    });
  }

  /** The template in force. @throws Error before {@link start} resolved. */
  current(): V1Pod {
    const template = this.state.value;
    if (template === undefined) throw new Error('helper pod template not loaded yet');
    return template;
  }

  /**
   * Loads the template and keeps it current until `signal` aborts. Rejects with upstream's start-up errors when the
   * first template cannot be read or is refused.
   */
  async start(signal: AbortSignal): Promise<void> {
    this.state.initial(await this.initialText(signal));
    const { config, file, mountPath } = this.options;
    if (file === undefined && config instanceof ConfigMapConfigSource) {
      const stop = config.on('changed', (snapshot, previous) => {
        if (snapshot.helperPodYaml !== previous.helperPodYaml) this.offer(snapshot.helperPodYaml);
      });
      signal.addEventListener('abort', stop, { once: true });
    }
    const intervalMs = this.options.pollIntervalMs ?? DEFAULT_CONFIG_POLL_INTERVAL_MS;
    if (mountPath !== undefined && intervalMs > 0) this.poll(path.join(mountPath, HELPER_POD_KEY), intervalMs, signal);
  }

  /** The template text at start-up: `--helper-pod-file`, else key `helperPod.yaml` of the ConfigMap. */
  private async initialText(signal: AbortSignal): Promise<string> {
    const { file, config, namespace, configMapName } = this.options;
    const fromConfigMap = (reason: string): Error =>
      new Error(
        `invalid empty flag helper-pod-file and it also does not exist at ConfigMap ${namespace}/${configMapName} with err: ${reason}`,
      );
    if (file !== undefined) {
      try {
        return await readFile(file, 'utf8');
      } catch (err) {
        throw new Error(`could not open file ${file} with err: ${describeError(err)}`, { cause: err });
      }
    }
    let text: string | undefined;
    if (config instanceof ConfigMapConfigSource) text = config.current().helperPodYaml;
    else {
      // The config came from a file or inline JSON: the template is read once from the ConfigMap, as upstream.
      try {
        const cm = await makeCoreV1Calls(this.options.kubeConfig).readNamespacedConfigMap(
          { name: configMapName, namespace },
          withSignal(signal),
        );
        text = cm.data?.[HELPER_POD_KEY];
      } catch (err) {
        throw fromConfigMap(describeError(err));
      }
    }
    if (text === undefined) throw fromConfigMap(`${HELPER_POD_KEY} is not exist in local-path-config ConfigMap`);
    return text;
  }

  /** Re-reads `file` every `intervalMs` until `signal` aborts; a file that cannot be read is logged each time. */
  private poll(file: string, intervalMs: number, signal: AbortSignal): void {
    const clock = this.options.clock ?? realClock;
    const next = (): void => {
      if (signal.aborted) return;
      const timer = clock.setTimeout(() => {
        signal.removeEventListener('abort', cancel);
        void readFile(file, 'utf8')
          .then(
            (text) => this.offer(text),
            (err: unknown) => this.logger.error({ err: describeError(err) }, REFUSED),
          )
          .finally(next);
      }, intervalMs);
      const cancel = (): void => clock.clearTimeout(timer);
      signal.addEventListener('abort', cancel, { once: true });
    };
    next();
  }

  /** Takes a text read again: every read is logged, a refusal reported (with an Event) once per refused text. */
  private offer(text: string | undefined): void {
    const offered = this.state.offer(text);
    switch (offered.kind) {
      case 'refused':
        reportRefused(
          this.logger,
          this.options,
          REFUSED,
          `New ${HELPER_POD_KEY} refused, the previous helper pod template stays in force`,
          offered.error,
        );
        return;
      case 'unchanged':
        if (offered.refused !== undefined) {
          this.logger.debug({ err: describeError(offered.refused.error) }, REFUSED);
          return;
        }
        break;
      case 'restored':
      case 'applied':
        break;
    }
    this.logger.debug({}, 'Applied helper pod template');
  }
}
