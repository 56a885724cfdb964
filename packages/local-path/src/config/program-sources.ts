/**
 * Where the program's config comes from, by its command line: `config.json` (`--config`: a file when it ends in
 * `.json`, else inline JSON; none: the ConfigMap through the API), and the `setup` and `teardown` scripts that node
 * mode runs itself.
 *
 * @packageDocumentation
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger, ObjectReference } from '@kprov/provisioner-lib';
import { parseConfig } from './parse.js';
import { ConfigMapConfigSource } from './reload-configmap.js';
import type { ConfigEventRecorder, ConfigSnapshot, ConfigSource } from './reload-core.js';
import { FileConfigSource } from './reload-file.js';

/** What {@link configSourceOf} needs. */
export interface ProgramConfig {
  /** `--config`; undefined: the ConfigMap through the API. */
  readonly config: string | undefined;
  readonly kubeConfig: KubeConfig;
  /** `--namespace`: the ConfigMap's. */
  readonly namespace: string;
  /** `--configmap-name`. */
  readonly configMapName: string;
  readonly logger: Logger;
  /** Records the `InvalidConfig` Events of refused configs. */
  readonly recorder: ConfigEventRecorder;
}

/** The `--configmap-name` ConfigMap, as the object of the Events about refused configs and templates. */
export function configMapRef(program: Pick<ProgramConfig, 'namespace' | 'configMapName'>): ObjectReference {
  return { apiVersion: 'v1', kind: 'ConfigMap', namespace: program.namespace, name: program.configMapName };
}

/** A config that never changes (`--config` with inline JSON). */
function staticSource(snapshot: ConfigSnapshot): ConfigSource {
  return {
    current: () => snapshot,
    start: () => Promise.resolve(),
    on: () => () => undefined,
    stopped: () => Promise.resolve(),
  };
}

/** `--config`: a file when it ends in `.json`, else inline JSON; none: the ConfigMap through the API. */
export function configSourceOf(program: ProgramConfig): ConfigSource {
  const { config, kubeConfig, namespace, configMapName, logger, recorder } = program;
  if (config === undefined) {
    // The recorder turns a refused config into an InvalidConfig Warning Event on the ConfigMap.
    return new ConfigMapConfigSource({ kubeConfig, namespace, name: configMapName }, { logger, recorder });
  }
  // Upstream's manifest mounts the ConfigMap and passes --config <mount>/config.json: a refused file is recorded on
  // that ConfigMap too, so `kubectl describe configmap` shows it.
  if (config.endsWith('.json'))
    return new FileConfigSource(config, { logger, recorder, involvedObject: configMapRef(program) });
  return staticSource({ config: parseConfig(config), text: config });
}

/** The ConfigMap's `setup` and `teardown` scripts, as far as they are known. */
export interface ScriptTexts {
  readonly setup?: string | undefined;
  readonly teardown?: string | undefined;
}

/** A file's text, or `undefined` when it does not exist. */
async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The `setup` and `teardown` scripts now: the ConfigMap's keys (ConfigMap source), else the files `setup` and
 * `teardown` next to the `--config` file (the mounted ConfigMap, read at each use, so an edit applies to the next
 * volume); none with an inline `--config`.
 */
export function scriptTextsOf(source: ConfigSource, config: string | undefined): () => Promise<ScriptTexts> {
  return async () => {
    if (source instanceof ConfigMapConfigSource) {
      const { setup, teardown } = source.current();
      return { setup, teardown };
    }
    if (config === undefined || !config.endsWith('.json')) return {};
    const dir = path.dirname(config);
    return {
      setup: await readIfExists(path.join(dir, 'setup')),
      teardown: await readIfExists(path.join(dir, 'teardown')),
    };
  };
}
