import { describe, expect, it } from 'vitest';
import { StatusError, type Status } from '../../src/api/status.js';
import { MAX_JSON_PATCH_OPERATIONS, applyJsonPatch } from '../../src/patch/json.js';
import { applyMergePatch, checkMergePatchBody } from '../../src/patch/merge.js';
import { applyStrategicMergePatch } from '../../src/patch/strategic.js';

/** The Status a call fails with. */
function failure(fn: () => unknown): Status {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e.status;
    throw e;
  }
  throw new Error('expected a StatusError');
}

const INVALID_422 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server rejected our request due to an error in our request',
  reason: 'Invalid',
  details: {},
  code: 422,
};

function expectBadRequest(fn: () => unknown, message: string): void {
  const s = failure(fn);
  expect(s.code).toBe(400);
  expect(s.reason).toBe('BadRequest');
  expect(s.message).toBe(message);
}

/** The bare 500 the apiserver answers for errors it does not convert: no reason, the raw message. */
function expectPassthrough(fn: () => unknown, message: string): void {
  const s = failure(fn);
  expect(s).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

describe('JSON merge patch (RFC 7386)', () => {
  // RFC 7386 Appendix A.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('merges %j with %j into %j', (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  it('merges nested objects member by member', () => {
    const pod = { metadata: { name: 'p', labels: { a: '1', b: '2' } }, spec: { nodeName: 'n' } };
    expect(applyMergePatch(pod, { metadata: { labels: { b: null, c: '3' } } })).toEqual({
      metadata: { name: 'p', labels: { a: '1', c: '3' } },
      spec: { nodeName: 'n' },
    });
  });

  it('replaces arrays instead of merging them', () => {
    expect(applyMergePatch({ metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: ['c'] } })).toEqual({
      metadata: { finalizers: ['c'] },
    });
  });

  it('returns a new value and never modifies its inputs', () => {
    const target = { a: { b: 1 }, list: [1] };
    const patch = { a: { c: { d: 2 } }, list: [2] };
    const before = structuredClone({ target, patch });
    const result = applyMergePatch(target, patch) as { a: { c: { d: number } }; list: number[] };
    expect({ target, patch }).toEqual(before);
    result.a.c.d = 99;
    result.list.push(3);
    expect(patch).toEqual(before.patch);
    expect(target).toEqual(before.target);
  });

  it('keeps a member named __proto__ as an ordinary member', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    const result = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['__proto__']);
  });

  it('rejects a null or scalar patch body as kube-apiserver does', () => {
    for (const body of [null, 'x', 1, true]) expectBadRequest(() => checkMergePatchBody(body), 'Invalid JSON Patch');
    expect(() => checkMergePatchBody({})).not.toThrow();
    expect(() => checkMergePatchBody([])).not.toThrow();
  });
});

describe('JSON patch (RFC 6902)', () => {
  // RFC 6902 Appendix A, the examples that succeed.
  it.each([
    [
      'A.1 adds an object member',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux' }],
      { baz: 'qux', foo: 'bar' },
    ],
    [
      'A.2 adds an array element',
      { foo: ['bar', 'baz'] },
      [{ op: 'add', path: '/foo/1', value: 'qux' }],
      { foo: ['bar', 'qux', 'baz'] },
    ],
    ['A.3 removes an object member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [
      'A.4 removes an array element',
      { foo: ['bar', 'qux', 'baz'] },
      [{ op: 'remove', path: '/foo/1' }],
      { foo: ['bar', 'baz'] },
    ],
    [
      'A.5 replaces a value',
      { baz: 'qux', foo: 'bar' },
      [{ op: 'replace', path: '/baz', value: 'boo' }],
      { baz: 'boo', foo: 'bar' },
    ],
    [
      'A.6 moves a value',
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    ],
    [
      'A.7 moves an array element',
      { foo: ['all', 'grass', 'cows', 'eat'] },
      [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] },
    ],
    [
      'A.8 passes matching tests',
      { baz: 'qux', foo: ['a', 2, 'c'] },
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      { baz: 'qux', foo: ['a', 2, 'c'] },
    ],
    [
      'A.10 adds a nested member object',
      { foo: 'bar' },
      [{ op: 'add', path: '/child', value: { grandchild: {} } }],
      { foo: 'bar', child: { grandchild: {} } },
    ],
    [
      'A.11 ignores unrecognized members of an operation',
      { foo: 'bar' },
      [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
      { foo: 'bar', baz: 'qux' },
    ],
    [
      'A.14 decodes ~01 as ~1, not as /',
      { '/': 9, '~1': 10 },
      [{ op: 'test', path: '/~01', value: 10 }],
      { '/': 9, '~1': 10 },
    ],
    [
      'A.16 adds an array value',
      { foo: ['bar'] },
      [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
      { foo: ['bar', ['abc', 'def']] },
    ],
  ])('%s', (_name, doc, ops, result) => {
    expect(applyJsonPatch(doc, ops)).toEqual(result);
  });

  // RFC 6902 Appendix A, the examples that fail.
  it.each([
    ['A.9 fails a test of a different value', { baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]],
    ['A.12 fails to add below a missing member', { foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]],
    [
      'A.15 fails a test of a string against a number',
      { '/': 9, '~1': 10 },
      [{ op: 'test', path: '/~01', value: '10' }],
    ],
  ])('%s with the 422 of the patch handler', (_name, doc, ops) => {
    expect(failure(() => applyJsonPatch(doc, ops))).toEqual(INVALID_422);
  });

  it('decodes ~1 as a slash in a member name', () => {
    expect(
      applyJsonPatch({ metadata: { annotations: {} } }, [
        { op: 'add', path: '/metadata/annotations/example.com~1key', value: 'v' },
      ]),
    ).toEqual({
      metadata: { annotations: { 'example.com/key': 'v' } },
    });
  });

  it('appends with - and inserts at the index equal to the length', () => {
    expect(
      applyJsonPatch({ a: [1] }, [
        { op: 'add', path: '/a/-', value: 2 },
        { op: 'add', path: '/a/2', value: 3 },
      ]),
    ).toEqual({ a: [1, 2, 3] });
  });

  it('copies a value, leaving the source in place', () => {
    expect(applyJsonPatch({ a: { b: [1] } }, [{ op: 'copy', from: '/a/b', path: '/c' }])).toEqual({
      a: { b: [1] },
      c: [1],
    });
  });

  it('copies deeply, so later changes to the copy leave the source alone', () => {
    expect(
      applyJsonPatch({ a: { b: 1 } }, [
        { op: 'copy', from: '/a', path: '/c' },
        { op: 'replace', path: '/c/b', value: 2 },
      ]),
    ).toEqual({ a: { b: 1 }, c: { b: 2 } });
  });

  it('replaces a whole array element by index', () => {
    expect(applyJsonPatch({ a: ['x', 'y'] }, [{ op: 'replace', path: '/a/1', value: 'z' }])).toEqual({ a: ['x', 'z'] });
  });

  it('sets a missing object member on replace, as json-patch v4 in kube-apiserver does', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/b', value: 2 }])).toEqual({ a: 1, b: 2 });
  });

  it('counts negative indexes from the end in add and remove, as json-patch v4 does', () => {
    expect(applyJsonPatch({ a: [1, 2, 3] }, [{ op: 'remove', path: '/a/-1' }])).toEqual({ a: [1, 2] });
    expect(applyJsonPatch({ a: [1, 2] }, [{ op: 'add', path: '/a/-1', value: 9 }])).toEqual({ a: [1, 2, 9] });
  });

  it('passes a test of null against a missing member', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/b', value: null }])).toEqual({ a: 1 });
  });

  it('compares objects by members regardless of their order in a test', () => {
    expect(
      applyJsonPatch({ a: { x: 1, y: [1, { z: 2 }] } }, [
        { op: 'test', path: '/a', value: { y: [1, { z: 2 }], x: 1 } },
      ]),
    ).toEqual({
      a: { x: 1, y: [1, { z: 2 }] },
    });
  });

  it('guards an update with a test of the resourceVersion', () => {
    const pod = { metadata: { name: 'p', resourceVersion: '5' } };
    const ops = [
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'add', path: '/metadata/labels', value: { a: 'b' } },
    ];
    expect(applyJsonPatch(pod, ops)).toEqual({ metadata: { name: 'p', resourceVersion: '5', labels: { a: 'b' } } });
    expect(failure(() => applyJsonPatch({ metadata: { name: 'p', resourceVersion: '6' } }, ops)).code).toBe(422);
  });

  it('replaces, adds to or tests the whole document with the empty pointer', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }])).toEqual({ b: 2 });
    expect(applyJsonPatch({ a: 1 }, [{ op: 'test', path: '', value: { a: 1 } }])).toEqual({ a: 1 });
  });

  it.each([
    ['an unknown op', [{ op: 'merge', path: '/a', value: 1 }]],
    ['an operation without op', [{ path: '/a', value: 1 }]],
    ['an operation without path', [{ op: 'add', value: 1 }]],
    ['a null operation', [null]],
    ['a path without a leading slash', [{ op: 'add', path: 'a', value: 1 }]],
    ['removing a missing member', [{ op: 'remove', path: '/missing' }]],
    ['removing the whole document', [{ op: 'remove', path: '' }]],
    ['removing past the end of an array', [{ op: 'remove', path: '/list/5' }]],
    ['adding past the end of an array', [{ op: 'add', path: '/list/5', value: 1 }]],
    ['adding at a non-numeric array index', [{ op: 'add', path: '/list/x', value: 1 }]],
    ['replacing past the end of an array', [{ op: 'replace', path: '/list/2', value: 1 }]],
    ['replacing at - in an array', [{ op: 'replace', path: '/list/-', value: 1 }]],
    ['moving from a missing member', [{ op: 'move', from: '/missing', path: '/b' }]],
    ['moving without from', [{ op: 'move', path: '/b' }]],
    ['moving a member into itself', [{ op: 'move', from: '/obj', path: '/obj/inner' }]],
    ['copying from past the end of an array', [{ op: 'copy', from: '/list/9', path: '/b' }]],
    ['traversing a scalar', [{ op: 'add', path: '/a/b', value: 1 }]],
    ['a test without value', [{ op: 'test', path: '/a' }]],
  ])('fails %s with the 422 of the patch handler', (_name, ops) => {
    expect(failure(() => applyJsonPatch({ a: 1, list: [1, 2], obj: {} }, ops))).toEqual(INVALID_422);
  });

  it('keeps the reason of a failed operation as the cause of the error', () => {
    try {
      applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]);
    } catch (e) {
      expect(e).toBeInstanceOf(StatusError);
      expect(((e as StatusError).cause as Error).message).toBe('testing value /a failed');
      return;
    }
    throw new Error('expected a failure');
  });

  it('applies all operations or none: a failed patch leaves the input as it was', () => {
    const doc = { a: 1 };
    expect(() =>
      applyJsonPatch(doc, [
        { op: 'add', path: '/b', value: 2 },
        { op: 'test', path: '/a', value: 3 },
      ]),
    ).toThrow(StatusError);
    expect(doc).toEqual({ a: 1 });
  });

  it('never modifies its inputs', () => {
    const doc = { a: { b: [1, 2] } };
    const value = { c: 1 };
    const ops = [
      { op: 'add', path: '/a/b/-', value },
      { op: 'move', from: '/a/b/0', path: '/x' },
    ];
    const before = structuredClone({ doc, ops });
    const result = applyJsonPatch(doc, ops) as { a: { b: unknown[] } };
    expect({ doc, ops }).toEqual(before);
    (result.a.b[1] as { c: number }).c = 99;
    expect(value).toEqual({ c: 1 });
  });

  it('treats a null body as an empty patch', () => {
    expect(applyJsonPatch({ a: 1 }, null)).toEqual({ a: 1 });
    expect(applyJsonPatch({ a: 1 }, [])).toEqual({ a: 1 });
  });

  it.each([
    [{}, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
    ['x', 'json: cannot unmarshal string into Go value of type jsonpatch.Patch'],
    [1, 'json: cannot unmarshal number into Go value of type jsonpatch.Patch'],
    [true, 'json: cannot unmarshal bool into Go value of type jsonpatch.Patch'],
    [[1], 'json: cannot unmarshal number into Go value of type jsonpatch.Operation'],
    [[[]], 'json: cannot unmarshal array into Go value of type jsonpatch.Operation'],
    [['add'], 'json: cannot unmarshal string into Go value of type jsonpatch.Operation'],
  ])('rejects the body %j, which is no array of operations, with a 400', (body, message) => {
    expectBadRequest(() => applyJsonPatch({ a: 1 }, body), message);
  });

  it('rejects more operations than the apiserver allows with a 413', () => {
    const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '/a', value: 1 }));
    const s = failure(() => applyJsonPatch({ a: 1 }, ops));
    expect(s.code).toBe(413);
    expect(s.reason).toBe('RequestEntityTooLarge');
    expect(s.message).toBe(
      'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    );
    expect(applyJsonPatch({ a: 1 }, ops.slice(1))).toEqual({ a: 1 });
  });
});

describe('strategic merge patch: maps and plain lists', () => {
  const smp = (target: unknown, patch: unknown, key = 'pods'): unknown => applyStrategicMergePatch(key, target, patch);

  it('merges maps like a merge patch, deleting members set to null', () => {
    expect(
      smp({ metadata: { name: 'p', labels: { a: '1', b: '2' } } }, { metadata: { labels: { b: null, c: '3' } } }),
    ).toEqual({
      metadata: { name: 'p', labels: { a: '1', c: '3' } },
    });
  });

  it('ignores null for a member that does not exist', () => {
    expect(smp({ metadata: { name: 'p' } }, { metadata: { labels: null } })).toEqual({ metadata: { name: 'p' } });
  });

  it('replaces lists without a merge strategy', () => {
    const pod = { spec: { tolerations: [{ key: 'a' }], containers: [{ name: 'c', args: ['x', 'y'] }] } };
    expect(smp(pod, { spec: { tolerations: [{ key: 'b' }], containers: [{ name: 'c', args: ['z'] }] } })).toEqual({
      spec: { tolerations: [{ key: 'b' }], containers: [{ name: 'c', args: ['z'] }] },
    });
  });

  it('replaces a value whose type changes', () => {
    expect(smp({ spec: { a: { b: 1 }, c: [1] } }, { spec: { a: 'x', c: { d: 1 } } })).toEqual({
      spec: { a: 'x', c: { d: 1 } },
    });
  });

  it('returns a copy of the target for a null patch', () => {
    const pod = { metadata: { name: 'p' } };
    const result = smp(pod, null);
    expect(result).toEqual(pod);
    expect(result).not.toBe(pod);
  });

  it('never modifies its inputs', () => {
    const pod = {
      metadata: { name: 'p', finalizers: ['a'] },
      spec: { containers: [{ name: 'c', env: [{ name: 'A', value: '1' }] }] },
    };
    const patch = {
      metadata: { finalizers: ['b'] },
      spec: {
        containers: [
          { name: 'c', env: [{ name: 'A', value: '2' }] },
          { name: 'd', $patch: 'delete' },
        ],
      },
    };
    const before = structuredClone({ pod, patch });
    smp(pod, patch);
    expect({ pod, patch }).toEqual(before);
  });

  it('rejects a patch that is not a JSON object with the decode error of the handler', () => {
    expectBadRequest(() => smp({}, []), 'json: cannot unmarshal array into Go value of type map[string]interface {}');
    expectBadRequest(() => smp({}, 'x'), 'json: cannot unmarshal string into Go value of type map[string]interface {}');
    expectBadRequest(() => smp({}, 3), 'json: cannot unmarshal number into Go value of type map[string]interface {}');
    expectBadRequest(() => smp({}, false), 'json: cannot unmarshal bool into Go value of type map[string]interface {}');
  });

  it('drops null members and directive keys from a value the live object lacks', () => {
    expect(
      smp(
        { spec: {} },
        {
          spec: {
            securityContext: { runAsUser: 1, runAsGroup: null, $retainKeys: ['x'], seLinuxOptions: { user: null } },
          },
        },
      ),
    ).toEqual({
      spec: { securityContext: { runAsUser: 1, seLinuxOptions: {} } },
    });
  });

  it('drops a new map that carries $patch, whatever its value, and new list elements that carry it', () => {
    expect(smp({ spec: { nodeName: 'n' } }, { spec: { securityContext: { runAsUser: 1, $patch: 'foo' } } })).toEqual({
      spec: { nodeName: 'n' },
    });
    expect(smp({ spec: {} }, { spec: { tolerations: [{ key: 'k', $patch: 'delete' }, { key: 'j' }] } })).toEqual({
      spec: { tolerations: [{ key: 'j' }] },
    });
    expect(smp({ spec: {} }, { spec: { initContainers: [{ name: 'x' }, { $patch: 'replace' }] } })).toEqual({
      spec: { initContainers: [{ name: 'x' }] },
    });
  });

  it('removes a field whose new value of another type carries $patch', () => {
    expect(
      smp({ spec: { nodeSelector: 'x', nodeName: 'n' } }, { spec: { nodeSelector: { a: 'b', $patch: 'replace' } } }),
    ).toEqual({
      spec: { nodeName: 'n' },
    });
  });
});

describe('strategic merge patch: merge lists', () => {
  const pod = (spec: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    metadata: { name: 'p' },
    spec,
    ...extra,
  });

  it('merges containers by name, keeping the fields the patch does not set', () => {
    const live = pod({
      containers: [
        { name: 'a', image: 'a:1', args: ['x'] },
        { name: 'b', image: 'b:1' },
      ],
    });
    expect(applyStrategicMergePatch('pods', live, { spec: { containers: [{ name: 'b', image: 'b:2' }] } })).toEqual(
      pod({
        containers: [
          { name: 'a', image: 'a:1', args: ['x'] },
          { name: 'b', image: 'b:2' },
        ],
      }),
    );
  });

  it('puts a container the patch adds ahead of the live ones, as the real server does', () => {
    const live = pod({ containers: [{ name: 'patch-demo-ctr', image: 'nginx' }] });
    expect(
      applyStrategicMergePatch('pods', live, { spec: { containers: [{ name: 'patch-demo-ctr-2', image: 'redis' }] } }),
    ).toEqual(
      pod({
        containers: [
          { name: 'patch-demo-ctr-2', image: 'redis' },
          { name: 'patch-demo-ctr', image: 'nginx' },
        ],
      }),
    );
  });

  it('places an added item right after the patch item that precedes it', () => {
    const live = pod({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    expect(
      applyStrategicMergePatch('pods', live, { spec: { containers: [{ name: 'b', image: 'x' }, { name: 'n' }] } }),
    ).toEqual(pod({ containers: [{ name: 'a' }, { name: 'b', image: 'x' }, { name: 'n' }, { name: 'c' }] }));
  });

  it('merges initContainers and volumes by name', () => {
    const live = pod({ initContainers: [{ name: 'init', image: 'i:1' }], volumes: [{ name: 'data', emptyDir: {} }] });
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: {
          initContainers: [{ name: 'init', image: 'i:2' }],
          volumes: [{ name: 'data', emptyDir: { medium: 'Memory' } }],
        },
      }),
    ).toEqual(
      pod({
        initContainers: [{ name: 'init', image: 'i:2' }],
        volumes: [{ name: 'data', emptyDir: { medium: 'Memory' } }],
      }),
    );
  });

  it('merges env by name, volumeMounts by mountPath and ports by containerPort inside a container', () => {
    const live = pod({
      containers: [
        {
          name: 'app',
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          ports: [{ containerPort: 80, protocol: 'TCP' }],
        },
      ],
    });
    const patch = {
      spec: {
        containers: [
          {
            name: 'app',
            env: [{ name: 'B', value: '3' }],
            volumeMounts: [{ name: 'data2', mountPath: '/data', readOnly: true }],
            ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }],
          },
        ],
      },
    };
    expect(applyStrategicMergePatch('pods', live, patch)).toEqual(
      pod({
        containers: [
          {
            name: 'app',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '3' },
            ],
            volumeMounts: [{ name: 'data2', mountPath: '/data', readOnly: true }],
            ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 443 }],
          },
        ],
      }),
    );
  });

  it('merges pod status conditions by type', () => {
    const live = {
      status: {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    };
    expect(
      applyStrategicMergePatch('pods', live, {
        status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Up' }] },
      }),
    ).toEqual({
      status: {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Up' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    });
    expect(
      applyStrategicMergePatch('pods', live, { status: { conditions: [{ type: 'Initialized', status: 'True' }] } }),
    ).toEqual({
      status: {
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'False' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    });
  });

  it('merges node conditions and addresses by type', () => {
    const live = {
      status: {
        conditions: [{ type: 'Ready', status: 'Unknown' }],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'Hostname', address: 'n1' },
        ],
      },
    };
    expect(
      applyStrategicMergePatch('nodes', live, {
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
        },
      }),
    ).toEqual({
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.2' },
          { type: 'Hostname', address: 'n1' },
        ],
      },
    });
  });

  it('merges PVC status conditions by type but replaces them on resources without the tag', () => {
    const live = { status: { conditions: [{ type: 'Resizing', status: 'True' }] } };
    const patch = { status: { conditions: [{ type: 'FileSystemResizePending', status: 'True' }] } };
    expect(applyStrategicMergePatch('persistentvolumeclaims', live, patch)).toEqual({
      status: {
        conditions: [
          { type: 'FileSystemResizePending', status: 'True' },
          { type: 'Resizing', status: 'True' },
        ],
      },
    });
    expect(applyStrategicMergePatch('storage.k8s.io/storageclasses', live, patch)).toEqual(patch);
  });

  it('merges ownerReferences by uid on every resource', () => {
    const live = {
      metadata: { name: 'c', ownerReferences: [{ uid: 'u1', kind: 'Pod', name: 'p', apiVersion: 'v1' }] },
    };
    expect(
      applyStrategicMergePatch('persistentvolumeclaims', live, {
        metadata: { ownerReferences: [{ uid: 'u1', controller: true }] },
      }),
    ).toEqual({
      metadata: {
        name: 'c',
        ownerReferences: [{ uid: 'u1', kind: 'Pod', name: 'p', apiVersion: 'v1', controller: true }],
      },
    });
  });

  it('unions finalizers without duplicates, keeping live ones in place', () => {
    const live = { metadata: { name: 'c', finalizers: ['a', 'b'] } };
    const finalizers = (patch: unknown): unknown =>
      (
        applyStrategicMergePatch('persistentvolumeclaims', live, { metadata: { finalizers: patch } }) as {
          metadata: { finalizers: unknown };
        }
      ).metadata.finalizers;
    expect(finalizers(['b', 'c'])).toEqual(['a', 'b', 'c']);
    expect(finalizers(['a', 'a'])).toEqual(['a', 'b']);
    expect(finalizers(['c'])).toEqual(['c', 'a', 'b']);
  });

  it('keeps finalizers for an empty list and removes them for null', () => {
    const live = { metadata: { name: 'c', finalizers: ['a'] } };
    expect(applyStrategicMergePatch('pods', live, { metadata: { finalizers: [] } })).toEqual(live);
    expect(applyStrategicMergePatch('pods', live, { metadata: { finalizers: null } })).toEqual({
      metadata: { name: 'c' },
    });
  });

  it('takes a merge list as it is when the live object has none', () => {
    expect(
      applyStrategicMergePatch('pods', { metadata: { name: 'p' } }, { metadata: { finalizers: ['x', 'y'] } }),
    ).toEqual({
      metadata: { name: 'p', finalizers: ['x', 'y'] },
    });
  });
});

describe('strategic merge patch: directives', () => {
  it('replaces a map with $patch: replace', () => {
    const live = { metadata: { name: 'p', labels: { a: '1', b: '2' } } };
    expect(applyStrategicMergePatch('pods', live, { metadata: { labels: { $patch: 'replace', c: '3' } } })).toEqual({
      metadata: { name: 'p', labels: { c: '3' } },
    });
  });

  it('empties a map with $patch: delete', () => {
    const live = { spec: { affinity: { nodeAffinity: {} }, nodeName: 'n' } };
    expect(applyStrategicMergePatch('pods', live, { spec: { affinity: { $patch: 'delete' } } })).toEqual({
      spec: { affinity: {}, nodeName: 'n' },
    });
  });

  it('deletes a merge-list element with $patch: delete and its merge key', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
    expect(applyStrategicMergePatch('pods', live, { spec: { containers: [{ name: 'b', $patch: 'delete' }] } })).toEqual(
      {
        spec: { containers: [{ name: 'a' }] },
      },
    );
  });

  it('replaces the whole merge list, not just the element, with a $patch: replace element', () => {
    const live = {
      spec: {
        volumes: [
          { name: 'a', emptyDir: {} },
          { name: 'b', emptyDir: {} },
        ],
      },
    };
    expect(
      applyStrategicMergePatch('pods', live, { spec: { volumes: [{ name: 'a', $patch: 'replace', secret: {} }] } }),
    ).toEqual({
      spec: { volumes: [] },
    });
  });

  it('replaces a merge list with a $patch: replace element', () => {
    const live = { spec: { containers: [{ name: 'a', image: 'a' }, { name: 'b' }] } };
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: { containers: [{ name: 'x', image: 'x' }, { $patch: 'replace' }] },
      }),
    ).toEqual({
      spec: { containers: [{ name: 'x', image: 'x' }] },
    });
  });

  it('removes finalizers listed in $deleteFromPrimitiveList/finalizers', () => {
    const live = { metadata: { name: 'c', finalizers: ['a', 'b', 'c'] } };
    expect(
      applyStrategicMergePatch('persistentvolumeclaims', live, {
        metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'x'] },
      }),
    ).toEqual({
      metadata: { name: 'c', finalizers: ['a', 'c'] },
    });
  });

  it('applies $deleteFromPrimitiveList to scalar lists without merge strategy too', () => {
    const live = { spec: { containers: [{ name: 'a', args: ['x', 'y', 'x'] }] } };
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: { containers: [{ name: 'a', '$deleteFromPrimitiveList/args': ['x'] }] },
      }),
    ).toEqual({
      spec: { containers: [{ name: 'a', args: ['y'] }] },
    });
  });

  it('removes the list itself for a null $deleteFromPrimitiveList', () => {
    const live = { metadata: { name: 'c', finalizers: ['a'] } };
    expect(
      applyStrategicMergePatch('pods', live, { metadata: { '$deleteFromPrimitiveList/finalizers': null } }),
    ).toEqual({ metadata: { name: 'c' } });
  });

  it('ignores $deleteFromPrimitiveList for a list the live object lacks', () => {
    expect(
      applyStrategicMergePatch(
        'pods',
        { metadata: { name: 'p' } },
        { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } },
      ),
    ).toEqual({
      metadata: { name: 'p' },
    });
  });

  it('orders a merge list by $setElementOrder', () => {
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }] } };
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }] },
      }),
    ).toEqual({
      spec: { containers: [{ name: 'b' }, { name: 'a' }] },
    });
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: {
          '$setElementOrder/containers': [{ name: 'a' }, { name: 'c' }, { name: 'b' }],
          containers: [{ name: 'c', image: 'c' }],
        },
      }),
    ).toEqual({ spec: { containers: [{ name: 'a' }, { name: 'c', image: 'c' }, { name: 'b' }] } });
  });

  it('orders finalizers by $setElementOrder and keeps unlisted live ones after them', () => {
    const live = { metadata: { name: 'c', finalizers: ['a', 'b'] } };
    expect(
      applyStrategicMergePatch('pods', live, {
        metadata: { '$setElementOrder/finalizers': ['b', 'a', 'c'], finalizers: ['c'] },
      }),
    ).toEqual({ metadata: { name: 'c', finalizers: ['b', 'a', 'c'] } });
    expect(
      applyStrategicMergePatch('pods', live, {
        metadata: { '$setElementOrder/finalizers': ['a', 'c'], finalizers: ['c'] },
      }),
    ).toEqual({
      metadata: { name: 'c', finalizers: ['a', 'c', 'b'] },
    });
  });

  it('clears the live keys that $retainKeys does not list', () => {
    const live = { spec: { volumes: [{ name: 'v', emptyDir: {} }] } };
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: { volumes: [{ name: 'v', hostPath: { path: '/x' }, $retainKeys: ['hostPath', 'name'] }] },
      }),
    ).toEqual({ spec: { volumes: [{ name: 'v', hostPath: { path: '/x' } }] } });
  });

  it('lets $retainKeys leave out keys the patch deletes', () => {
    expect(
      applyStrategicMergePatch('pods', { spec: { a: 1, b: 2 } }, { spec: { $retainKeys: ['a'], b: null } }),
    ).toEqual({ spec: { a: 1 } });
  });

  it('leaves no directive in the result', () => {
    const live = {
      metadata: { name: 'p', finalizers: ['a'] },
      spec: { containers: [{ name: 'a' }], volumes: [{ name: 'v', emptyDir: {} }] },
    };
    const result = applyStrategicMergePatch('pods', live, {
      metadata: {
        '$deleteFromPrimitiveList/finalizers': ['a'],
        '$setElementOrder/finalizers': ['b'],
        finalizers: ['b'],
      },
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'n' }],
        containers: [{ name: 'n', env: [{ name: 'X', value: '1' }], $retainKeys: ['name', 'env'] }],
        volumes: [{ name: 'v', secret: { secretName: 's' }, $retainKeys: ['name', 'secret'] }],
        newList: [
          { $patch: 'delete', name: 'q' },
          { name: 'r', $setElementOrder: [] },
        ],
        containersAdded: [{ name: 'c', env: [{ name: 'X', $patch: 'delete' }] }],
      },
    });
    expect(JSON.stringify(result)).not.toContain('$');
    expect(result).toEqual({
      metadata: { name: 'p', finalizers: ['b'] },
      spec: {
        containers: [{ name: 'a' }, { name: 'n', env: [{ name: 'X', value: '1' }] }],
        volumes: [{ name: 'v', secret: { secretName: 's' } }],
        newList: [{ name: 'r' }],
        containersAdded: [{ name: 'c', env: [] }],
      },
    });
  });
});

describe('strategic merge patch: elements appended to a merge list', () => {
  it('keeps nested elements of an appended element but drops their directive keys, as the typed decode does', () => {
    const live = { spec: { containers: [{ name: 'a' }] } };
    expect(
      applyStrategicMergePatch('pods', live, {
        spec: {
          containers: [
            {
              name: 'b',
              env: [
                { name: 'X', $patch: 'delete' },
                { name: 'Y', value: null },
              ],
            },
          ],
        },
      }),
    ).toEqual({ spec: { containers: [{ name: 'b', env: [{ name: 'X' }, { name: 'Y' }] }, { name: 'a' }] } });
  });
});

describe('strategic merge patch: errors', () => {
  const smp = (target: unknown, patch: unknown, key = 'pods'): unknown => applyStrategicMergePatch(key, target, patch);

  it('rejects a $retainKeys that is not a list, or that leaves out a key the patch sets, with a 400', () => {
    expectBadRequest(() => smp({ spec: {} }, { spec: { $retainKeys: 'a' } }), 'invalid patch format of retainKeys');
    expectBadRequest(
      () => smp({ spec: {} }, { spec: { $retainKeys: ['a'], b: 1 } }),
      'invalid patch format of retainKeys',
    );
  });

  it('rejects a $deleteFromPrimitiveList or $setElementOrder key without a field with a 400', () => {
    expectBadRequest(
      () => smp({ metadata: {} }, { metadata: { $deleteFromPrimitiveListfinalizers: ['a'] } }),
      'invalid patch format of primitive list',
    );
    expectBadRequest(
      () => smp({ metadata: {} }, { metadata: { $setElementOrder: [] } }),
      'invalid patch format of setElementOrder list',
    );
  });

  it('answers a list of lists with the generic 422', () => {
    expect(failure(() => smp({ metadata: { finalizers: [] } }, { metadata: { finalizers: [['a']] } }))).toEqual(
      INVALID_422,
    );
  });

  it('passes an unknown $patch value through as a 500', () => {
    expectPassthrough(
      () => smp({ metadata: { labels: {} } }, { metadata: { labels: { $patch: 'foo', a: 1 } } }),
      'unknown patch type: foo in map: map[$patch:foo a:1]',
    );
    expectPassthrough(
      () => smp({ spec: { containers: [{ name: 'a' }] } }, { spec: { containers: [{ name: 'a', $patch: 'bogus' }] } }),
      'unknown patch type: bogus in map: map[$patch:bogus name:a]',
    );
    expectPassthrough(
      () => smp({ spec: { a: {} } }, { spec: { a: { $patch: 1 } } }),
      'unknown patch type: %!s(int64=1) in map: map[$patch:1]',
    );
  });

  it('passes $patch: merge in a list through as a 500', () => {
    expectPassthrough(
      () => smp({ spec: { containers: [{ name: 'a' }] } }, { spec: { containers: [{ name: 'a', $patch: 'merge' }] } }),
      'merging lists cannot yet be specified in the patch',
    );
  });

  it('passes a merge-list element without its merge key through as a 500', () => {
    expectPassthrough(
      () => smp({ spec: { containers: [{ name: 'a' }] } }, { spec: { containers: [{ $patch: 'delete' }] } }),
      'map: map[$patch:delete] does not contain declared merge key: name',
    );
    expectPassthrough(
      () =>
        smp(
          { spec: { containers: [{ name: 'a' }] } },
          { spec: { containers: [{ image: 'x', ports: [{ containerPort: 80 }] }] } },
        ),
      'map: map[image:x ports:[map[containerPort:80]]] does not contain declared merge key: name',
    );
  });

  it('passes a deletion list of objects for a list without merge key through as a 500', () => {
    expectPassthrough(
      () =>
        smp(
          { spec: { tolerations: [{ key: 'a' }] } },
          { spec: { '$deleteFromPrimitiveList/tolerations': [{ key: 'a' }] } },
        ),
      'cannot merge lists without merge key for struct',
    );
  });

  it('passes mixed element types through as a 500', () => {
    expectPassthrough(
      () => smp({ metadata: { finalizers: ['a'] } }, { metadata: { finalizers: [1.5] } }),
      'list element types are not identical: [[a] [1.5]]',
    );
  });

  it('passes a $setElementOrder that is not a list through as a 500', () => {
    expectPassthrough(
      () => smp({ metadata: {} }, { metadata: { '$setElementOrder/finalizers': 'a' } }),
      'expected a []interface {}, but received a string',
    );
  });

  it('passes a patch list out of $setElementOrder order through as a 500', () => {
    expectPassthrough(
      () =>
        smp(
          { spec: { containers: [{ name: 'a' }] } },
          { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'c' }] } },
        ),
      "The order in patch list:\n[map[name:c]]\n doesn't match $setElementOrder list:\n[map[name:a]]\n",
    );
  });
});
