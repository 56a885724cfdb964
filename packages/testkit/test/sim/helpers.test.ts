import { describe, expect, it } from 'vitest';
import { expand } from '../../src/sim/kubelet/env.js';
import { PathMapper } from '../../src/sim/kubelet/paths.js';
import { firstUntoleratedTaint, matchesLabelSelector, matchesNodeSelector } from '../../src/sim/match.js';

describe('PathMapper', () => {
  const mapper = new PathMapper([
    { containerPath: '/data', hostPath: '/tmp/root/srv' },
    { containerPath: '/data/cache/', hostPath: '/tmp/pod/cache' },
    { containerPath: '/', hostPath: '/tmp/never' },
  ]);

  it('rewrites mount paths on path boundaries, longest first', () => {
    expect(mapper.rewrite('mkdir -p /data/x')).toBe('mkdir -p /tmp/root/srv/x');
    expect(mapper.rewrite('/data')).toBe('/tmp/root/srv');
    expect(mapper.rewrite('--dir=/data/cache/a:/data')).toBe('--dir=/tmp/pod/cache/a:/tmp/root/srv');
    expect(mapper.rewrite('VOL="/data/pvc 1"')).toBe('VOL="/tmp/root/srv/pvc 1"');
  });

  it('leaves look-alikes and other paths alone', () => {
    for (const text of ['/database', '/data2', '/data-old', '/data.bak', '/var/data', 'x/data', '/etc/hosts', '/']) {
      expect(mapper.rewrite(text)).toBe(text);
    }
  });

  it('never rewrites what it produced', () => {
    const nested = new PathMapper([
      { containerPath: '/tmp', hostPath: '/tmp/node/tmp' },
      { containerPath: '/x', hostPath: '/tmp/node/x' },
    ]);
    expect(nested.rewrite('/tmp/a /x')).toBe('/tmp/node/tmp/a /tmp/node/x');
  });

  it('resolves paths inside a mount', () => {
    expect(mapper.resolve('/data/cache/y')).toBe('/tmp/pod/cache/y');
    expect(mapper.resolve('/data')).toBe('/tmp/root/srv');
    expect(mapper.resolve('/elsewhere')).toBeUndefined();
  });
});

describe('$(VAR) expansion', () => {
  const vars = new Map([
    ['A', 'one'],
    ['B', '$(A)-two'],
  ]);
  it('expands defined variables and keeps the rest as written', () => {
    expect(expand('$(A)/$(B)', vars)).toBe('one/$(A)-two');
    expect(expand('$(MISSING) $(A', vars)).toBe('$(MISSING) $(A');
    expect(expand('$$(A) $$ $x $', vars)).toBe('$(A) $ $x $');
  });
});

describe('matching', () => {
  it('matches label selectors and node selector terms', () => {
    const labels = { zone: 'a', disk: 'ssd', cores: '8' };
    expect(
      matchesLabelSelector(
        { matchLabels: { zone: 'a' }, matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] },
        labels,
      ),
    ).toBe(true);
    expect(
      matchesLabelSelector({ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }] }, labels),
    ).toBe(false);
    const gt = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] }] };
    expect(matchesNodeSelector(gt, labels, 'n1')).toBe(true);
    const byName = {
      nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }, {}],
    };
    expect(matchesNodeSelector(byName, labels, 'n1')).toBe(false);
    expect(matchesNodeSelector(byName, labels, 'n2')).toBe(true);
  });

  it('finds untolerated taints', () => {
    const taints = [
      { key: 'a', value: 'x', effect: 'NoSchedule' },
      { key: 'b', effect: 'PreferNoSchedule' },
    ];
    expect(firstUntoleratedTaint(taints, [])).toEqual(taints[0]);
    expect(firstUntoleratedTaint(taints, [{ key: 'a', operator: 'Equal', value: 'x' }])).toBeUndefined();
    expect(firstUntoleratedTaint(taints, [{ operator: 'Exists' }])).toBeUndefined();
    expect(firstUntoleratedTaint(taints, [{ key: 'a', value: 'y', effect: 'NoSchedule' }])).toEqual(taints[0]);
  });
});
