/**
 * The config from a mounted ConfigMap directory, re-read every `--config-sync-period`. A config that cannot be read
 * never replaces the one in force (upstream exits then); a class that became invalid keeps its last valid settings.
 *
 * @module
 */
import { join } from 'node:path';
import { realClock, sleep, silentLogger, type Clock, type Logger } from '@kprov/provisioner-lib';
import { LastGood } from '@kprov/provisioner-lib/runtime';
import { isScalar, parse, type Tags } from 'yaml';
import { readdir, readFile, stat } from '../fs/async.js';
import { buildConfig, type ProvisionerConfig } from './config.js';
import { canonicalKeys } from './field-names.js';

/** The config directory could not be read, or a key is not YAML. */
export class ConfigReadError extends Error {
  override readonly name = 'ConfigReadError';
}

/**
 * The files of a ConfigMap directory: one per key, by file name. Names starting with `..` (the kubelet's `..data`
 * link and timestamped folders) and directories are skipped.
 */
export async function readConfigTexts(dir: string): Promise<Record<string, string>> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (err) {
    throw new ConfigReadError(`cannot read the config directory ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const texts: Record<string, string> = {};
  for (const name of names) {
    if (name.startsWith('..')) continue;
    const file = join(dir, name);
    try {
      if ((await stat(file)).isDirectory()) continue;
      texts[name] = await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigReadError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  return texts;
}

/**
 * YAML 1.1's tags less those that upstream's Go YAML library (go-yaml v2) does not resolve: base-60 numbers (`1:30`)
 * and timestamps (`2024-01-31`) stay strings there.
 */
function goYamlTags(tags: Tags): Tags {
  return tags.filter(
    (tag) => typeof tag === 'string' || (tag.format !== 'TIME' && tag.tag !== 'tag:yaml.org,2002:timestamp'),
  );
}

/**
 * The keys' values as YAML 1.1 (what upstream's Go YAML library reads: `yes` and `no` are booleans too; base-60 numbers
 * and timestamps are strings, as there). Ints are bigints and floats numbers, so that a string field reads `1` and
 * `1.0` as upstream does (see `goString`); the config's readers turn the other ints into numbers. A key set twice in
 * one mapping is read as upstream's library reads it: the last one wins; `onWarning` is told.
 *
 * @throws {@link ConfigReadError} naming the key whose text is not YAML.
 */
export function parseConfigTexts(
  texts: Readonly<Record<string, string>>,
  onWarning?: (warning: string) => void,
): Record<string, unknown> {
  const keys: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(texts)) {
    const twice = new Set<string>();
    try {
      keys[name] = parse(text, {
        version: '1.1',
        intAsBigInt: true,
        customTags: goYamlTags,
        // Never equal (so never refused), but noted when they are.
        uniqueKeys: (a, b) => {
          if (isScalar(a) && isScalar(b) && a.value === b.value) twice.add(String(a.value));
          return false;
        },
      }) as unknown;
      for (const key of twice)
        onWarning?.(
          `config key ${name} sets ${JSON.stringify(key)} more than once in one mapping: the last one wins, as upstream reads it; keep one`,
        );
    } catch (err) {
      throw new ConfigReadError(`key ${name} is not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`, {
        cause: err,
      });
    }
  }
  return keys;
}

/** The config in force and what is wrong with the config the directory holds now. */
export interface ConfigState {
  /** The config in force. */
  config: ProvisionerConfig;
  /**
   * Problems of the last config read: keys and classes that could not be used (left at their default, or at their
   * last valid settings), or why the whole config could not be read. Empty when everything applied.
   */
  errors: string[];
}

/** Options of {@link ConfigDirectory}. */
export interface ConfigDirectoryOptions {
  /** The mounted ConfigMap. */
  dir: string;
  /** How often it is read again, in ms (`--config-sync-period`). */
  periodMs: number;
  /** Time source of the polling. Default the real clock. */
  clock?: Clock;
  /** Default silent. */
  logger?: Logger;
}

/** A config built from the directory's keys, with the classes that kept their last valid settings. */
interface Built extends ConfigState {
  kept: string[];
}

/**
 * The config of a ConfigMap directory, kept current by {@link ConfigDirectory.run}. The directory's texts are the input
 * of the runtime's `LastGood`: texts that do not parse never replace the config in force.
 */
export class ConfigDirectory {
  private state: ConfigState | undefined;
  private readonly lastGood = new LastGood<string, Built>({
    parse: (texts, inForce) => this.build(JSON.parse(texts) as Record<string, string>, inForce?.value.config),
  });
  /** Warnings logged already: each once per process. */
  private readonly warned = new Set<string>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly listeners = new Set<(state: ConfigState) => void>();

  constructor(private readonly options: ConfigDirectoryOptions) {
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
  }

  /**
   * The first read. Keys and classes that cannot be used are reported in the state's `errors` (and logged).
   *
   * @throws {@link ConfigReadError} when the directory cannot be read or a key is not YAML (upstream exits then too).
   */
  async load(): Promise<ConfigState> {
    const built = this.lastGood.initial(JSON.stringify(await readConfigTexts(this.options.dir)));
    for (const error of built.errors)
      this.logger.error({ err: error }, 'Invalid provisioner configuration entry, left out');
    this.state = { config: built.config, errors: built.errors };
    return this.state;
  }

  /**
   * The config of `texts`; a class whose entry became invalid keeps its settings of `previous`, so that its volumes go
   * on being discovered and cleaned. @throws {@link ConfigReadError} when a key is not YAML.
   */
  private build(texts: Record<string, string>, previous: ProvisionerConfig | undefined): Built {
    const keys = parseConfigTexts(texts, (w) => this.warn(w));
    const built = buildConfig(keys);
    for (const warning of built.warnings) this.warn(warning);
    const kept: string[] = [];
    const classes = (canonicalKeys(keys).keys.storageClassMap ?? {}) as Record<string, unknown>;
    for (const [name, settings] of Object.entries(previous?.storageClassMap ?? {})) {
      if (built.config.storageClassMap[name] === undefined && typeof classes === 'object' && name in classes) {
        built.config.storageClassMap[name] = settings;
        kept.push(name);
      }
    }
    return { config: built.config, errors: built.errors, kept };
  }

  private warn(warning: string): void {
    if (this.warned.has(warning)) return;
    this.warned.add(warning);
    this.logger.warn({}, warning);
  }

  /** The state in force. @throws Error before {@link ConfigDirectory.load}. */
  current(): ConfigState {
    if (this.state === undefined) throw new Error('config not loaded yet');
    return this.state;
  }

  /** Calls `listener` with every new state (a changed config, or a change in what is wrong with it). */
  onChange(listener: (state: ConfigState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the directory again and applies what changed; never throws. */
  async reload(): Promise<void> {
    const previous = this.current();
    let texts: Record<string, string>;
    try {
      texts = await readConfigTexts(this.options.dir);
    } catch (err) {
      // Not the input's fault: once the directory reads again, its texts are looked at even when they are the same.
      this.lastGood.forget();
      this.refuse(previous, err);
      return;
    }
    const offered = this.lastGood.offer(JSON.stringify(texts));
    switch (offered.kind) {
      case 'unchanged':
        return;
      case 'refused':
        this.refuse(previous, offered.error);
        return;
      case 'restored': {
        // The config in force is read again after a refused one: what was wrong is over.
        const inForce = this.lastGood.value!;
        this.logger.info({}, 'Provisioner configuration readable again, keeping it');
        this.publish({ config: inForce.config, errors: inForce.errors });
        return;
      }
      case 'applied': {
        const built = offered.value;
        for (const error of built.errors) this.logger.error({ err: error }, 'Invalid provisioner configuration entry');
        if (built.kept.length > 0)
          this.logger.warn(
            { classes: built.kept },
            'Keeping the last valid settings of classes whose new entry is invalid',
          );
        this.logger.info({}, 'Provisioner configuration changed, applying it');
        this.publish({ config: built.config, errors: built.errors });
      }
    }
  }

  /** Reports a config that could not be read or parsed, once: the config in force stays. */
  private refuse(previous: ConfigState, err: unknown): void {
    const message = `${(err as Error).message}; keeping the last valid configuration`;
    if (previous.errors.length === 1 && previous.errors[0] === message) return;
    this.logger.error({ err: message }, 'Failed to load the new provisioner configuration');
    this.publish({ config: previous.config, errors: [message] });
  }

  private publish(state: ConfigState): void {
    this.state = state;
    for (const listener of [...this.listeners]) {
      try {
        listener(state);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'Config listener failed');
      }
    }
  }

  /** Re-reads the directory every `periodMs` until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await sleep(this.clock, this.options.periodMs, signal);
      } catch {
        return;
      }
      await this.reload();
    }
  }
}
