/**
 * The config's keys as upstream's decoder reads them (sigs.k8s.io/yaml, then encoding/json): any case, Go's folding,
 * at every level; several spellings of one key applied in the byte order of the spellings; a key set twice in one
 * mapping; each other spelling warned about once; unquoted numbers and booleans in string fields read as their text,
 * in the config and in the PV and Job built from it (through the testkit's API server).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from '@kprov/provisioner-lib';
import { FakeClock } from '@kprov/provisioner-lib/testing';
import { describeTiers } from '@kprov/testkit/vitest';
import { BatchV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { buildConfig } from '../src/config/config.js';
import { ConfigDirectory, parseConfigTexts } from '../src/config/source.js';
import { cleanupJob } from '../src/deleter/job.js';
import { volumeName } from '../src/discovery/volume-name.js';
import { HOST_DIR, startEnv, storageClass, waitVolumes } from './helpers.js';

const KELVIN = '\u212a';
const LONG_S = '\u017f';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The config of ConfigMap keys (file name → text), as the binary reads a mounted directory. */
function read(texts: Record<string, string>): ReturnType<typeof buildConfig> {
  return buildConfig(parseConfigTexts(texts));
}

describe('config keys spelled otherwise than upstream names them', () => {
  // Each row was checked against upstream's loader: ConfigMapDataToVolumeConfig's YAML built from the same keys,
  // decoded by sigs.k8s.io/yaml v1.4.0 into upstream's structs (encoding/json of Go 1.19, whose folding is
  // bytes.EqualFold's, as in Go 1.25).
  it.each([
    [
      "a class's fields in any case, with Go's K and ſ",
      {
        storageClassMap: [
          'fast:',
          '  hostdir: /mnt/a',
          '  MOUNTDIR: /m/a',
          '  VolumeMode: Block',
          `  bloc${KELVIN}cleanercommand: [x]`,
          '  FSTYPE: ext4',
          "  namepattern: 'd*'",
          '  accessmode: ReadWriteMany',
          `  cleanupTimeout: 1h`,
          'slow:',
          `  ho${LONG_S}tDir: /mnt/b`,
          '  mountDir: /m/b',
        ].join('\n'),
      },
      {
        storageClassMap: {
          fast: {
            hostDir: '/mnt/a',
            mountDir: '/m/a',
            volumeMode: 'Block',
            blockCleanerCommand: ['x'],
            fsType: 'ext4',
            namePattern: 'd*',
            accessMode: 'ReadWriteMany',
          },
          slow: { hostDir: '/mnt/b', mountDir: '/m/b' },
        },
      },
    ],
    [
      'the top-level keys (the ConfigMap keys) in any case',
      {
        usejobforcleaning: 'true',
        USEALPHAAPI: 'yes',
        nodelabelsforpv: '- a',
        MinResyncPeriod: '1h',
        labelsforpv: 'A: b',
        setpvownerref: 'true',
        useNodeNameonly: 'true',
        removenodenotreadytaint: 'true',
        provisionernotreadynodetaintkey: 'k',
        JOBTOLERATIONS: '- key: dedicated\n  operator: Exists',
      },
      {
        useJobForCleaning: true,
        useAlphaAPI: true,
        nodeLabelsForPV: ['a'],
        minResyncPeriodMs: 3_600_000,
        labelsForPV: { A: 'b' },
        setPVOwnerRef: true,
        useNodeNameOnly: true,
        removeNodeNotReadyTaint: true,
        provisionerNotReadyNodeTaintKey: 'k',
        jobTolerations: [{ key: 'dedicated', operator: 'Exists' }],
      },
    ],
    [
      "a selector's and a toleration's fields in any case",
      {
        storageClassMap:
          'one:\n  hostDir: /one\n  mountDir: /m\n  Selector:\n  - MatchExpressions:\n    - KEY: k\n      Operator: In\n      VALUES: [v]\n',
        jobTolerations: '- KEY: k\n  operator: Exists\n  EFFECT: NoSchedule\n  tolerationseconds: 5\n',
      },
      {
        storageClassMap: {
          one: { selector: [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] }] },
        },
        jobTolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 5 }],
      },
    ],
    [
      'class names (map keys) as they are: two classes',
      { storageClassMap: 'One: {hostDir: /one, mountDir: /m}\none: {hostDir: /two, mountDir: /m}' },
      { storageClassMap: { One: { hostDir: '/one' }, one: { hostDir: '/two' } } },
    ],
  ] as const)('reads %s', (_, texts, expected) => {
    const { config, errors } = read(texts);
    expect(errors).toEqual([]);
    expect(config).toMatchObject(expected);
  });

  it("ignores a key that only Unicode's full folding would match (İ is not I)", () => {
    const { config, errors } = read({ storageClassMap: 'fast: {hostd\u0130r: /a, mountDir: /m}' });
    expect(config.storageClassMap).toEqual({});
    expect(errors).toEqual(['Storage Class fast is misconfigured, missing HostDir or MountDir parameter']);
  });

  it.each([
    ['hostDir: /first, hostdir: /second, HostDir: /third', '/second'],
    ['hostdir: /first, hostDir: /second', '/first'],
    ['hostDir: /a, hostdir: null', '/a'],
  ] as const)('applies several spellings in byte order, as upstream: {%s} is hostDir %s', (fields, hostDir) => {
    const { config } = read({ storageClassMap: `fast: {${fields}, mountDir: /m}` });
    expect(config.storageClassMap.fast?.hostDir).toBe(hostDir);
  });

  it.each([
    [
      'maps are merged, the later spelling winning a label',
      { labelsForPV: "a: '1'\nb: '1'", labelsforpv: "b: '2'\nc: '2'" },
      { labelsForPV: { a: '1', b: '2', c: '2' } },
    ],
    ['a list is the later one', { nodeLabelsForPV: '- a\n- b', nodelabelsforpv: '- c' }, { nodeLabelsForPV: ['c'] }],
    ['a later null leaves a boolean as it was', { useAlphaAPI: 'true', usealphaapi: 'null' }, { useAlphaAPI: true }],
    ['a later null empties a map', { labelsForPV: "a: '1'", labelsforpv: '' }, { labelsForPV: {} }],
    [
      "a later list is decoded into the earlier one's elements (encoding/json reuses them)",
      {
        storageClassMap:
          'one:\n  hostDir: /one\n  mountDir: /m\n  Selector:\n  - matchFields: [{key: f, operator: In, values: [x]}]\n  selector:\n  - matchExpressions: [{key: k, operator: In, values: [v]}]\n',
      },
      {
        storageClassMap: {
          one: {
            selector: [
              {
                matchFields: [{ key: 'f', operator: 'In', values: ['x'] }],
                matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }],
              },
            ],
          },
        },
      },
    ],
    [
      'a key set twice in one mapping is the last one',
      { storageClassMap: 'fast:\n  hostDir: /a\n  hostDir: /b\n  mountDir: /m\n' },
      { storageClassMap: { fast: { hostDir: '/b' } } },
    ],
  ] as const)('with several spellings of a key, %s', (_, texts, expected) => {
    const { config, errors } = read(texts);
    expect(errors).toEqual([]);
    expect(config).toMatchObject(expected);
  });

  it('with several spellings of a key, merges classes; a class in both is the later one, whole', () => {
    const { config } = read({
      storageClassMap: 'one: {hostDir: /one, mountDir: /m, fsType: xfs}\nkept: {hostDir: /k, mountDir: /k}',
      storageclassmap: 'one: {hostDir: /two, mountDir: /m2}',
    });
    expect(Object.keys(config.storageClassMap)).toEqual(['one', 'kept']);
    expect(config.storageClassMap.one).toMatchObject({ hostDir: '/two', mountDir: '/m2' });
    expect(config.storageClassMap.one).not.toHaveProperty('fsType');
  });

  it('warns about each other spelling and each key set twice, naming the key as upstream spells it', () => {
    const warnings: string[] = [];
    const { warnings: built } = buildConfig(
      parseConfigTexts(
        {
          usejobforcleaning: 'true',
          storageClassMap: 'fast:\n  hostDir: /a\n  hostdir: /b\n  mountDir: /m\n  mountDir: /n\n',
        },
        (w) => warnings.push(w),
      ),
    );
    expect(warnings).toEqual([
      'config key storageClassMap sets "mountDir" more than once in one mapping: the last one wins, as upstream reads it; keep one',
    ]);
    expect(built).toEqual([
      'config key storageClassMap.fast.hostDir is set 2 times, as "hostDir", "hostdir": they apply in that order (the byte order of the spellings, as upstream applies them), so "hostdir" wins; keep one, spelled "hostDir"',
      'config key usejobforcleaning is read as useJobForCleaning: spell it "useJobForCleaning"',
    ]);
  });

  it('logs each warning once, however often the config is read again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kprov-static-spelling-'));
    temps.push(dir);
    const warned: string[] = [];
    const logger: Logger = {
      error: () => undefined,
      warn: (_, message) => warned.push(message),
      info: () => undefined,
      debug: () => undefined,
      child: () => logger,
    };
    writeFileSync(path.join(dir, 'storageClassMap'), 'fast: {hostdir: /a, mountDir: /a}\n');
    const source = new ConfigDirectory({ dir, periodMs: 1000, clock: new FakeClock(), logger });
    expect((await source.load()).config.storageClassMap.fast?.hostDir).toBe('/a');
    writeFileSync(path.join(dir, 'storageClassMap'), 'fast: {hostdir: /b, mountDir: /a}\n');
    await source.reload();
    expect(source.current().config.storageClassMap.fast?.hostDir).toBe('/b');
    writeFileSync(path.join(dir, 'storageClassMap'), 'fast: {hostdir: /b, MountDir: /a}\n');
    await source.reload();
    expect(warned).toEqual([
      'config key storageClassMap.fast.hostdir is read as storageClassMap.fast.hostDir: spell it "hostDir"',
      'config key storageClassMap.fast.MountDir is read as storageClassMap.fast.mountDir: spell it "mountDir"',
    ]);
  });
});

describe('numbers and booleans in string fields', () => {
  // As sigs.k8s.io/yaml reads them into upstream's string fields (convertToJSONableObject): go-yaml v2 resolves the
  // scalar (YAML 1.1: `yes`, `on` are true; no base-60 numbers nor timestamps), then an int is its decimal digits, a
  // float strconv.FormatFloat(f, 'g', -1, 32), a boolean `true` or `false`.
  it.each([
    [
      'labelsForPV values, floats as Go prints a float32',
      {
        labelsForPV: [
          'tier: 1',
          'backup: yes',
          'ssd: true',
          'spin: Off',
          'one: 1.0',
          'kilo: 1e3',
          'mega: 1000000.0',
          'pi: 3.14159265358979',
          'tiny: 0.00001',
          'half: .5',
          'neg: -2',
          'plus: +7',
          'octal: 010',
          'hex: 0x1F',
          'sep: 1_000',
          'u64: 18446744073709551615',
          'beyond: 18446744073709551616',
          'date: 2024-01-31',
          'clock: 1:30',
          'word: y',
        ].join('\n'),
      },
      {
        labelsForPV: {
          tier: '1',
          backup: 'true',
          ssd: 'true',
          spin: 'false',
          one: '1',
          kilo: '1000',
          mega: '1e+06',
          pi: '3.1415927',
          tiny: '1e-05',
          half: '0.5',
          neg: '-2',
          plus: '7',
          octal: '8',
          hex: '31',
          sep: '1000',
          u64: '18446744073709551615',
          beyond: '1.8446744e+19',
          date: '2024-01-31',
          clock: '1:30',
          word: 'true',
        },
      },
    ],
    [
      'nodeLabelsForPV and provisionerNotReadyNodeTaintKey',
      { nodeLabelsForPV: '[1, on, 2.50]', provisionerNotReadyNodeTaintKey: '1e3' },
      { nodeLabelsForPV: ['1', 'true', '2.5'], provisionerNotReadyNodeTaintKey: '1000' },
    ],
    [
      "a class's string fields",
      {
        storageClassMap:
          'fast:\n  hostDir: /a\n  mountDir: /m\n  blockCleanerCommand: [sh, -c, 0, no]\n  namePattern: 1\n  fsType: 4\n  accessMode: 2\n',
      },
      {
        storageClassMap: {
          fast: { blockCleanerCommand: ['sh', '-c', '0', 'false'], namePattern: '1', fsType: '4', accessMode: '2' },
        },
      },
    ],
    [
      "a selector's and a toleration's string fields (tolerationSeconds stays a number)",
      {
        storageClassMap:
          'one:\n  hostDir: /one\n  mountDir: /m\n  selector:\n  - matchExpressions: [{key: 1, operator: In, values: [yes, 1.5, 7]}]\n    matchFields: [{key: 2, operator: NotIn, values: [0]}]\n',
        jobTolerations: '- {key: 1, operator: Equal, value: yes, effect: 0, tolerationSeconds: 5}\n',
      },
      {
        storageClassMap: {
          one: {
            selector: [
              {
                matchExpressions: [{ key: '1', operator: 'In', values: ['true', '1.5', '7'] }],
                matchFields: [{ key: '2', operator: 'NotIn', values: ['0'] }],
              },
            ],
          },
        },
        jobTolerations: [{ key: '1', operator: 'Equal', value: 'true', effect: '0', tolerationSeconds: 5 }],
      },
    ],
  ] as const)('reads %s as their text', (_, texts, expected) => {
    const { config, errors } = read(texts);
    expect(errors).toEqual([]);
    expect(config).toMatchObject(expected);
  });

  it("checks the text as upstream does; a duration's number stays a number, refused", () => {
    const { errors } = read({
      storageClassMap: 'a: {hostDir: 1, mountDir: /m}\nb: {hostDir: /b, mountDir: /m, volumeMode: true}\n',
      minResyncPeriod: '5',
    });
    expect(errors).toEqual([
      'minResyncPeriod: invalid duration 5',
      'Storage Class a is misconfigured: hostDir and mountDir must be absolute paths',
      'unsupported volume mode true',
    ]);
  });
});

describeTiers('numbers and booleans in string fields, through the API', () => {
  it('give a PV and a cleanup Job that carry their text', async () => {
    const node = 'node-1';
    const e = await startEnv([{ name: node, labels: { '1': 'one' } }]);
    await e.storage.createStorageClass({ body: storageClass('sc1') });
    const dir = e.onNode(node, HOST_DIR);
    e.mounts.mount(`${dir}/1`, 16);
    e.mounts.mount(`${dir}/2`, 16);
    const keys = parseConfigTexts({
      storageClassMap: [
        'sc1:',
        `  hostDir: ${HOST_DIR}`,
        `  mountDir: ${dir}`,
        '  namePattern: 1',
        '  blockCleanerCommand: [sh, -c, 0]',
        '  selector:',
        '  - matchExpressions: [{key: 2, operator: In, values: [yes, 1.5]}]',
      ].join('\n'),
      labelsForPV: '{tier: 1, backup: yes, ratio: 1e3}',
      nodeLabelsForPV: '[1]',
      jobTolerations: '- {key: 1, operator: Equal, value: on, effect: NoSchedule}',
    });
    await e.start(node, keys);
    const name = volumeName('1', node, 'sc1');
    const pv = (await waitVolumes(e, [name])).get(name)!;
    expect(pv.metadata?.labels).toEqual({ '1': 'one', tier: '1', backup: 'true', ratio: '1000' });
    expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
      { matchExpressions: [{ key: '2', operator: 'In', values: ['true', '1.5'] }] },
    ]);
    // namePattern 1 matched the entry 1 only.
    expect((await e.read.volume(volumeName('2', node, 'sc1')))?.metadata).toBeUndefined();

    const { config } = buildConfig(keys);
    const cls = config.storageClassMap.sc1!;
    const batch = e.cluster.kubeConfig.makeApiClient(BatchV1Api);
    await batch.createNamespacedJob({
      namespace: 'default',
      body: cleanupJob({
        pv,
        nodeName: node,
        namespace: 'default',
        image: 'img',
        command: cls.blockCleanerCommand,
        containerPath: `${dir}/1`,
        hostDir: cls.hostDir,
        mountDir: cls.mountDir,
        tolerations: config.jobTolerations,
        now: new Date(),
      }),
    });
    const job = await batch.readNamespacedJob({ name: `cleanup-${name}`, namespace: 'default' });
    expect(job.spec?.template.spec?.tolerations).toEqual([
      { key: '1', operator: 'Equal', value: 'true', effect: 'NoSchedule' },
    ]);
    expect(job.spec?.template.spec?.containers[0]?.command).toEqual(['sh', '-c', '0']);
  });
});
