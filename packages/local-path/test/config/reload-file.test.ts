import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '@kprov/provisioner-lib/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT } from '@kprov/testkit/vitest';
import { ConfigError } from '../../src/config/index.js';
import { FileConfigSource, type ConfigSnapshot, type FileConfigSourceOptions } from '../../src/config/reload.js';
import { json } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kprov-reload-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const config = (path: string): string =>
  json({ nodePathMap: [{ node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [path] }] });
const pathsOf = (s: ConfigSnapshot): readonly string[] | undefined =>
  s.config.defaultConfig?.nodePathMap.get('DEFAULT_PATH_FOR_NON_LISTED_NODES');

interface Started {
  source: FileConfigSource;
  changed: ConfigSnapshot[];
  rejected: ConfigError[];
}

async function start(path: string, options: FileConfigSourceOptions = {}): Promise<Started> {
  const source = new FileConfigSource(path, { debounceMs: 10, ...options });
  const changed: ConfigSnapshot[] = [];
  const rejected: ConfigError[] = [];
  source.on('changed', (s) => changed.push(s));
  source.on('rejected', (e) => rejected.push(e));
  const controller = new AbortController();
  cleanups.push(async () => {
    controller.abort();
    await source.stopped();
  });
  await source.start(controller.signal);
  return { source, changed, rejected };
}

/** A ConfigMap volume as the kubelet writes it: `..data` → timestamped dir, `config.json` → `..data/config.json`. */
async function configMapVolume(dir: string, text: string): Promise<{ update(text: string): Promise<void> }> {
  let n = 0;
  const writeVersion = async (content: string): Promise<string> => {
    n += 1;
    const name = `..2024_01_01_00_00_0${n}.000000${n}`;
    await mkdir(join(dir, name));
    await writeFile(join(dir, name, 'config.json'), content);
    return name;
  };
  await symlink(await writeVersion(text), join(dir, '..data'));
  await symlink(join('..data', 'config.json'), join(dir, 'config.json'));
  return {
    update: async (content) => {
      const old = `..2024_01_01_00_00_0${n}.000000${n}`;
      const name = await writeVersion(content);
      await symlink(name, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
      await rm(join(dir, old), { recursive: true });
    },
  };
}

describe('FileConfigSource', () => {
  it('loads the file at start', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.json'), config('/opt/a/'));
    const { source } = await start(join(dir, 'config.json'));
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    expect(source.current().helperPodYaml).toBeUndefined();
  });

  it('throws before start and rejects when the first load fails', async () => {
    const dir = await tempDir();
    const path = join(dir, 'config.json');
    expect(() => new FileConfigSource(path).current()).toThrow(/not started/);
    await expect(new FileConfigSource(path).start(new AbortController().signal)).rejects.toMatchObject({
      code: 'no-config',
    });
    await writeFile(path, json({ nodePathMap: [{ node: 'n', paths: ['/'] }] }));
    const err: unknown = await new FileConfigSource(path).start(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).upstream).toBe(
      "StorageClass config canonicalization failed: cannot use root ('/') as path on node n",
    );
  });

  it('applies a change written to the file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'config.json');
    await writeFile(path, config('/opt/a'));
    const { source, changed } = await start(path);
    await writeFile(path, config('/opt/b'));
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
    expect(changed.map(pathsOf)).toEqual([['/opt/b']]);
  });

  it('keeps the last good config when the new one is bad, and reports it once', async () => {
    const dir = await tempDir();
    const path = join(dir, 'config.json');
    await writeFile(path, config('/opt/a'));
    const logged: string[] = [];
    const events: string[] = [];
    const logger = {
      error: (f: Record<string, unknown>, m: string) => logged.push(`${m}: ${String(f.err)}`),
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      child: () => logger,
    };
    const { source, changed, rejected } = await start(path, {
      logger,
      recorder: {
        event: (ref, type, reason, message) => events.push(`${ref.kind}/${ref.name} ${type} ${reason} ${message}`),
      },
      involvedObject: { kind: 'Pod', namespace: 'local-path-storage', name: 'provisioner-0' },
    });
    await writeFile(path, config('relative'));
    await vi.waitFor(() => expect(rejected).toHaveLength(1), WAIT);
    expect(rejected[0]?.code).toBe('relative-path');
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    expect(logged[0]).toContain('path must start with / for path relative on node DEFAULT_PATH_FOR_NON_LISTED_NODES');
    expect(events[0]).toMatch(/^Pod\/provisioner-0 Warning InvalidConfig New config refused.*path must start with \//);
    await writeFile(path, '{ not json');
    await vi.waitFor(() => expect(rejected).toHaveLength(2), WAIT);
    expect(rejected[1]?.upstream).toMatch(new RegExp(`^fail to load config file ${path}: `));
    await writeFile(path, config('/opt/c'));
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/c']), WAIT);
    expect(changed).toHaveLength(1);
    expect(rejected).toHaveLength(2);
  });

  it('picks up a ConfigMap volume update (atomic ..data symlink swap)', async () => {
    const dir = await tempDir();
    const volume = await configMapVolume(dir, config('/opt/a'));
    const { source, changed } = await start(join(dir, 'config.json'), { pollIntervalMs: 0 });
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    await volume.update(config('/opt/b'));
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
    await volume.update(config('/opt/c'));
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/c']), WAIT);
    expect(changed.map(pathsOf)).toEqual([['/opt/b'], ['/opt/c']]);
  });

  it('polls every pollIntervalMs when there are no watch events', async () => {
    const dir = await tempDir();
    const path = join(dir, 'config.json');
    await writeFile(path, config('/opt/a'));
    const clock = new FakeClock();
    const { source, changed } = await start(path, { watch: false, clock });
    await writeFile(path, config('/opt/b'));
    await clock.advanceAsync(29_999);
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    await clock.advanceAsync(1);
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
    await writeFile(path, config('/opt/c'));
    await vi.waitFor(async () => {
      await clock.advanceAsync(30_000);
      expect(pathsOf(source.current())).toEqual(['/opt/c']);
    }, WAIT);
    expect(changed.map(pathsOf)).toEqual([['/opt/b'], ['/opt/c']]);
  });

  it('reports a file that disappears and applies it when it is back', async () => {
    const dir = await tempDir();
    const path = join(dir, 'config.json');
    await writeFile(path, config('/opt/a'));
    const { source, rejected } = await start(path);
    await rm(path);
    await vi.waitFor(() => expect(rejected.map((e) => e.code)).toEqual(['no-config']), WAIT);
    expect(pathsOf(source.current())).toEqual(['/opt/a']);
    await writeFile(path, config('/opt/b'));
    await vi.waitFor(() => expect(pathsOf(source.current())).toEqual(['/opt/b']), WAIT);
  });
});
