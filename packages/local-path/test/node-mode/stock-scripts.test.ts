/**
 * Which scripts node mode leaves to its built-in behaviour: the stock ones of our manifest, our chart and upstream,
 * however indented or commented. Any other script, and any configured command, runs as a child process.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { isStockScript, planScript } from '../../src/executor/node/scripts.js';

const pkg = fileURLToPath(new URL('../../', import.meta.url));
const manifestData =
  parseAllDocuments(readFileSync(`${pkg}deploy/local-path-storage.yaml`, 'utf8'))
    .map((d) => d.toJS() as { kind?: string; data?: Record<string, string> })
    .find((d) => d.kind === 'ConfigMap')?.data ?? {};
const chartValues = parse(readFileSync(`${pkg}deploy/chart/local-path-provisioner/values.yaml`, 'utf8')) as {
  configmap: { setup: string; teardown: string };
};

describe('stock scripts', () => {
  it('are those of deploy/local-path-storage.yaml and of the chart', () => {
    expect(isStockScript('create', manifestData.setup ?? '')).toBe(true);
    expect(isStockScript('delete', manifestData.teardown ?? '')).toBe(true);
    expect(isStockScript('create', chartValues.configmap.setup)).toBe(true);
    expect(isStockScript('delete', chartValues.configmap.teardown)).toBe(true);
  });

  it("are upstream's plain mkdir and rm", () => {
    expect(isStockScript('create', '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"')).toBe(true);
    expect(isStockScript('delete', '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n')).toBe(true);
  });

  it('do not include a changed script, nor a setup script as teardown', () => {
    expect(isStockScript('create', '#!/bin/sh\nset -eu\nmkdir -m 0700 -p "$VOL_DIR"')).toBe(false);
    expect(isStockScript('delete', manifestData.setup ?? '')).toBe(false);
  });

  it('planScript: a command wins, a stock or missing script is built in, any other script runs under /bin/sh', () => {
    const args = ['-p', '/d'];
    expect(planScript('create', '/bin/setup', 'exit 1', args)).toEqual({
      kind: 'run',
      argv: ['/bin/setup', '-p', '/d'],
      what: 'setupCommand /bin/setup',
    });
    expect(planScript('create', '', manifestData.setup, args)).toEqual({ kind: 'builtin' });
    expect(planScript('delete', undefined, undefined, args)).toEqual({ kind: 'builtin' });
    expect(planScript('delete', '', 'rm -r "$VOL_DIR"', args)).toEqual({
      kind: 'run',
      argv: ['/bin/sh', '-c', 'rm -r "$VOL_DIR"', '/script/teardown', '-p', '/d'],
      what: 'the teardown script',
    });
  });
});
