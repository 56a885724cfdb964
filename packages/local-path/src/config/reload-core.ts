/**
 * What every config source shares: the snapshot type, the typed callback list, and the keep-last-good state (the
 * runtime's `LastGood`: apply a new text only when it differs and parses; otherwise log, emit an Event and report
 * `rejected`).
 *
 * @packageDocumentation
 */
import { describeError, type Logger, type ObjectReference } from '@kprov/provisioner-lib';
import { LastGood } from '@kprov/provisioner-lib/runtime';
import { ConfigError } from './errors.js';
import { parseConfig } from './parse.js';
import type { Config } from './schema.js';

/**
 * What a config source delivers. `config` is always there; the ConfigMap source also delivers the other keys of the
 * same ConfigMap (`helperPod.yaml`, `setup`, `teardown`) as text, `undefined` when the key is absent. They are
 * handed on as they are: the helper-pod template is validated by whoever builds helper pods
 * (`loadHelperPodTemplate`), and the scripts are only mounted into helper pods, never run by the provisioner.
 */
export interface ConfigSnapshot {
  /** The validated config in force. */
  readonly config: Config;
  /** The `config.json` text it was parsed from. */
  readonly text: string;
  /** The helper-pod template text (ConfigMap key `helperPod.yaml`); ConfigMap source only. */
  readonly helperPodYaml?: string | undefined;
  /** The setup script (ConfigMap key `setup`); ConfigMap source only. */
  readonly setup?: string | undefined;
  /** The teardown script (ConfigMap key `teardown`); ConfigMap source only. */
  readonly teardown?: string | undefined;
}

/** Callback arguments per event of a {@link ConfigSource}. */
export interface ConfigSourceEvents {
  /** A new snapshot is in force (`config.json` or, for the ConfigMap source, another key changed). */
  changed: [snapshot: ConfigSnapshot, previous: ConfigSnapshot];
  /** A new config (or a deleted ConfigMap) was refused; `current` is the last good snapshot, still in force. */
  rejected: [error: ConfigError, current: ConfigSnapshot];
}

/** A listener of event `E`. */
export type ConfigSourceListener<E extends keyof ConfigSourceEvents> = (...args: ConfigSourceEvents[E]) => void;

/**
 * A config that can change while the provisioner runs. A new config that does not parse never replaces a good one:
 * the last good one stays in force, the problem is logged and reported as `rejected` (and as a Warning Event when a
 * recorder is given).
 */
export interface ConfigSource {
  /** The snapshot in force. @throws Error before {@link ConfigSource.start} resolved. */
  current(): ConfigSnapshot;
  /**
   * Loads the config and keeps watching until `signal` aborts. Resolves after the first successful load; rejects
   * with the {@link ConfigError} when the very first load fails (nothing is watched then), or with `signal.reason`
   * when aborted first. A source starts once.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Adds a listener; returns a function that removes it. Listener exceptions are caught and logged. */
  on<E extends keyof ConfigSourceEvents>(event: E, listener: ConfigSourceListener<E>): () => void;
  /** Resolves once the source has stopped all its work after `signal` aborted (or after a failed start). */
  stopped(): Promise<void>;
}

/** The one call of `EventRecorder` a source makes. */
export interface ConfigEventRecorder {
  event(ref: ObjectReference, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** Reason of the Warning Event recorded when a new config is refused. */
export const CONFIG_REJECTED_REASON = 'InvalidConfig';

/** Options every source takes. */
export interface ConfigSourceOptions {
  /** Default silent. */
  logger?: Logger;
  /** Records a Warning Event ({@link CONFIG_REJECTED_REASON}) for every refused config. Default none. */
  recorder?: ConfigEventRecorder;
  /** What the Event is about. The ConfigMap source defaults to its ConfigMap; the file source records none without it. */
  involvedObject?: ObjectReference;
}

/** The raw inputs of one load: `config.json` text plus the other ConfigMap keys. */
export interface SourceTexts {
  text: string;
  helperPodYaml?: string | undefined;
  setup?: string | undefined;
  teardown?: string | undefined;
}

function sameTexts(a: SourceTexts, b: SourceTexts): boolean {
  return a.text === b.text && a.helperPodYaml === b.helperPodYaml && a.setup === b.setup && a.teardown === b.teardown;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Reports a refused config or template: logged as an error (`line`, with the error), and recorded as a Warning
 * {@link CONFIG_REJECTED_REASON} Event on the involved object (`<what> refused, <what stays>: <error>`) when both
 * a recorder and an object are given.
 */
export function reportRefused(
  logger: Logger,
  options: ConfigSourceOptions,
  line: string,
  event: string,
  error: unknown,
  fields: Record<string, unknown> = {},
): void {
  logger.error({ err: describeError(error), ...fields }, line);
  const { recorder, involvedObject } = options;
  if (recorder !== undefined && involvedObject !== undefined)
    recorder.event(involvedObject, 'Warning', CONFIG_REJECTED_REASON, `${event}: ${describeError(error)}`);
}

/**
 * The state and callbacks of a source, on the runtime's keep-last-good rule ({@link LastGood}); the sources feed it
 * texts and errors.
 */
export class ConfigState {
  /** The texts last looked at (good or bad) and the snapshot in force, so an unchanged bad text is reported once. */
  private readonly state: LastGood<SourceTexts, ConfigSnapshot>;
  private readonly listeners: { [E in keyof ConfigSourceEvents]: Set<ConfigSourceListener<E>> } = {
    changed: new Set(),
    rejected: new Set(),
  };

  constructor(
    private readonly logger: Logger,
    private readonly options: ConfigSourceOptions,
    /** Names the config in JSON errors (`fail to load config file <name>: ...`). */
    configName: string,
  ) {
    this.state = new LastGood({
      // Only a new config.json is parsed: the config object stays the same when only the other keys changed.
      parse: (texts, inForce) => ({
        ...texts,
        config:
          inForce !== undefined && inForce.input.text === texts.text
            ? inForce.value.config
            : parseConfig(texts.text, configName),
      }),
      same: sameTexts,
    });
  }

  current(): ConfigSnapshot {
    const snapshot = this.state.value;
    if (snapshot === undefined) throw new Error('config source not started: no config loaded yet');
    return snapshot;
  }

  get loaded(): boolean {
    return this.state.value !== undefined;
  }

  on<E extends keyof ConfigSourceEvents>(event: E, listener: ConfigSourceListener<E>): () => void {
    const set = this.listeners[event] as Set<ConfigSourceListener<E>>;
    set.add(listener);
    return () => set.delete(listener);
  }

  private emit<E extends keyof ConfigSourceEvents>(event: E, ...args: ConfigSourceEvents[E]): void {
    for (const listener of [...(this.listeners[event] as Set<ConfigSourceListener<E>>)]) {
      try {
        listener(...args);
      } catch (err) {
        this.logger.error({ err: errorText(err), event }, 'Config source listener failed');
      }
    }
  }

  /**
   * The first load: parses `texts` and keeps the result. @throws {@link ConfigError} when it does not parse.
   */
  initial(texts: SourceTexts): ConfigSnapshot {
    const snapshot = this.state.initial(texts);
    this.logger.debug({ config: texts.text }, 'Applied config');
    this.warn(snapshot.config);
    return snapshot;
  }

  /** A later load: applies `texts` when they differ from what was last seen and parse; otherwise keeps the last good. */
  offer(texts: SourceTexts): void {
    const offered = this.state.offer(texts);
    switch (offered.kind) {
      case 'unchanged':
        return;
      case 'restored':
        this.logger.info({}, 'Config is back to the one in force');
        return;
      case 'refused':
        if (offered.error instanceof ConfigError) this.reject(offered.error);
        else throw offered.error;
        return;
      case 'applied':
        this.logger.debug({ config: texts.text }, 'Applied config');
        if (offered.value.config !== offered.previous.config) this.warn(offered.value.config);
        this.emit('changed', offered.value, offered.previous);
    }
  }

  /** Logs what an applied config has that is worth a warning (unknown keys). */
  private warn(config: Config): void {
    for (const warning of config.warnings ?? []) this.logger.warn({}, warning);
  }

  /** Reports a problem; the last good snapshot stays in force. Forgets the last seen texts, so any next ones are looked at. */
  reject(error: ConfigError, forgetSeen = false): void {
    const current = this.state.value;
    if (current === undefined) return;
    if (forgetSeen) this.state.forget();
    reportRefused(
      this.logger,
      this.options,
      'failed to load the new config file; keeping the last valid config',
      'New config refused, the last valid config stays in force',
      error,
      { code: error.code },
    );
    this.emit('rejected', error, current);
  }
}

/**
 * What both sources share: the keep-last-good state, its listeners, and the promise that settles once the source
 * has shut down. Subclasses set `state` in their constructor and `done` when they start.
 */
export abstract class ConfigSourceBase implements ConfigSource {
  protected abstract readonly state: ConfigState;
  protected done: Promise<void> = Promise.resolve();

  current(): ConfigSnapshot {
    return this.state.current();
  }

  on<E extends keyof ConfigSourceEvents>(event: E, listener: ConfigSourceListener<E>): () => void {
    return this.state.on(event, listener);
  }

  stopped(): Promise<void> {
    return this.done;
  }

  abstract start(signal: AbortSignal): Promise<void>;
}
