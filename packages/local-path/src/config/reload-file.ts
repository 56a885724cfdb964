/**
 * `config.json` from a file, typically a mounted ConfigMap (`--config /etc/config/config.json`), reloaded on change.
 *
 * @packageDocumentation
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { realClock, silentLogger, type Clock, type Logger, type TimerHandle } from '@kprov/provisioner-lib';
import { ConfigError } from './errors.js';
import { ConfigSourceBase, ConfigState, type ConfigSourceOptions } from './reload-core.js';

/** Upstream's `ConfigFileCheckInterval`: 30 s. */
export const DEFAULT_CONFIG_POLL_INTERVAL_MS = 30_000;
/** Default quiet time after a directory event before the file is read: 100 ms. */
export const DEFAULT_CONFIG_DEBOUNCE_MS = 100;

/** Options of {@link FileConfigSource}. */
export interface FileConfigSourceOptions extends ConfigSourceOptions {
  /** Re-read the file this often, whatever the watch says. Default {@link DEFAULT_CONFIG_POLL_INTERVAL_MS}; 0 = off. */
  pollIntervalMs?: number;
  /** Watch the file's directory with `fs.watch`. Default true. */
  watch?: boolean;
  /** Wait this long after a directory event (more events restart it) before reading. Default {@link DEFAULT_CONFIG_DEBOUNCE_MS}. */
  debounceMs?: number;
  /** Time source of the polling and the debounce. Default {@link realClock}. */
  clock?: Clock;
}

/**
 * `config.json` read from `path`, reloaded when it changes.
 *
 * A ConfigMap volume updates by writing a new timestamped directory and atomically renaming a new `..data` symlink
 * over the old one; `config.json` is a symlink to `..data/config.json`, so the file's own inode never changes and a
 * watch on it sees nothing. This source therefore watches the file's **directory** (any event there triggers a
 * read, after `debounceMs`), and also re-reads every `pollIntervalMs` as upstream does, in case events are lost
 * (network file systems, a directory replaced). A read only applies when the text changed. A `subPath` mount is
 * never updated by the kubelet; nothing can reload it.
 *
 * Problems after the first load (unreadable file, invalid JSON, a broken rule) keep the last good config in force,
 * are logged, recorded as a Warning Event when `recorder` and `involvedObject` are given, and reported as
 * `rejected`; the same bad text is reported once, not at every poll.
 */
export class FileConfigSource extends ConfigSourceBase {
  protected readonly state: ConfigState;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly debounceMs: number;
  private readonly watchDir: boolean;
  private started = false;
  /** A read in progress, and whether another one was asked for meanwhile. */
  private reading: Promise<void> | undefined;
  private readAgain = false;
  private lastReadError: string | undefined;

  constructor(
    readonly path: string,
    options: FileConfigSourceOptions = {},
  ) {
    super();
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ configFile: path });
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_CONFIG_POLL_INTERVAL_MS;
    this.debounceMs = options.debounceMs ?? DEFAULT_CONFIG_DEBOUNCE_MS;
    this.watchDir = options.watch ?? true;
    this.state = new ConfigState(this.logger, options, path);
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('FileConfigSource.start: a source starts only once');
    this.started = true;
    signal.throwIfAborted();
    this.state.initial({ text: await this.readText() });
    signal.throwIfAborted();
    this.done = new Promise<void>((resolve) => this.run(signal, resolve));
  }

  /** Reads the file. @throws {@link ConfigError} `no-config` when it cannot be read. */
  private async readText(): Promise<string> {
    try {
      return await readFile(this.path, 'utf8');
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ConfigError(
        'no-config',
        `fail to load config file ${this.path}: ${reason}`,
        'check that the file exists and is readable (with a ConfigMap volume: that the ConfigMap has this key)',
        { cause: err },
      );
    }
  }

  /** Reads and offers the file; at most one read at a time, a request during one makes one more afterwards. */
  private check(): Promise<void> {
    if (this.reading !== undefined) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        try {
          const text = await this.readText();
          this.lastReadError = undefined;
          this.state.offer({ text });
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          if (err.message !== this.lastReadError) {
            this.lastReadError = err.message;
            this.state.reject(err, true);
          }
        }
      } while (this.readAgain);
    })()
      .catch((err: unknown) =>
        this.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'Config reload failed'),
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  private run(signal: AbortSignal, resolve: () => void): void {
    let watcher: FSWatcher | undefined;
    // TimerHandle is `unknown`; boxed so that `undefined` means "no timer".
    let pollTimer: { handle: TimerHandle } | undefined;
    let debounceTimer: { handle: TimerHandle } | undefined;
    const startWatch = (): void => {
      if (!this.watchDir || watcher !== undefined || signal.aborted) return;
      try {
        const w = watch(dirname(this.path), { persistent: false }, () => {
          if (debounceTimer !== undefined) this.clock.clearTimeout(debounceTimer.handle);
          debounceTimer = {
            handle: this.clock.setTimeout(() => {
              debounceTimer = undefined;
              void this.check();
            }, this.debounceMs),
          };
        });
        w.on('error', (err) => {
          this.logger.warn(
            { err: err.message },
            'Config directory watch failed; relying on polling until it can be set up again',
          );
          w.close();
          if (watcher === w) watcher = undefined;
        });
        watcher = w;
      } catch (err) {
        this.logger.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'Cannot watch the config directory; relying on polling',
        );
      }
    };
    const schedulePoll = (): void => {
      if (this.pollIntervalMs <= 0 || signal.aborted) return;
      pollTimer = {
        handle: this.clock.setTimeout(() => {
          pollTimer = undefined;
          startWatch();
          void this.check().finally(schedulePoll);
        }, this.pollIntervalMs),
      };
    };
    const stop = (): void => {
      watcher?.close();
      watcher = undefined;
      if (pollTimer !== undefined) this.clock.clearTimeout(pollTimer.handle);
      if (debounceTimer !== undefined) this.clock.clearTimeout(debounceTimer.handle);
      void (this.reading ?? Promise.resolve()).then(resolve);
    };
    startWatch();
    schedulePoll();
    signal.addEventListener('abort', stop, { once: true });
  }
}
