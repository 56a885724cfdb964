import { describe, expect, it } from 'vitest';
import { ListItemSplitter, type ListItemOptions } from '../../src/client/list-items.js';

/** Splits `text` cut into the given pieces (byte offsets), as chunks arriving one after another. */
function split(
  text: string,
  cuts: readonly number[] = [],
  options: ListItemOptions = {},
): { items: unknown[]; list: unknown } {
  const bytes = Buffer.from(text, 'utf8');
  const items: unknown[] = [];
  const splitter = new ListItemSplitter((item) => items.push(item), options);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    splitter.write(bytes.subarray(from, cut));
    from = cut;
  }
  const { list, items: count } = splitter.end();
  expect(count).toBe(items.length);
  return { items, list };
}

/** What `JSON.parse` makes of the whole text: its items, and the rest with `items` empty (or null as sent). */
function whole(text: string): { items: unknown[]; list: unknown } {
  const parsed = JSON.parse(text) as { items: unknown[] | null };
  return { items: parsed.items ?? [], list: { ...parsed, items: parsed.items === null ? null : [] } };
}

const tricky = {
  kind: 'PersistentVolumeList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '42', continue: 'a"b\\c', note: '"items":[{' },
  items: [
    { metadata: { name: 'a', annotations: { x: '}]},{"', y: 'ends with a backslash \\', z: '\\"' } } },
    { metadata: { name: 'é ünïcode 😀 ✓', labels: {} }, spec: { accessModes: ['ReadWriteOnce'], n: [1, [2, {}]] } },
    { metadata: { name: 'c' }, spec: { empty: '', nested: { deeper: { list: [{ a: null }, true, false, -1.5e3] } } } },
  ],
};

describe('ListItemSplitter: a list decoded item by item, as the answer arrives', () => {
  it.each([
    ['compact, as kube-apiserver writes it', JSON.stringify(tricky)],
    ['indented', JSON.stringify(tricky, null, 2)],
    ['with no items', JSON.stringify({ kind: 'List', metadata: { resourceVersion: '1' }, items: [] })],
    ['with items null', '{"kind":"List","metadata":{"resourceVersion":"1"},"items":null}'],
    ['items before metadata', '{"items":[{"a":"[1]"},{"b":{"c":[]}}],"metadata":{"resourceVersion":"7"},"x":[1,2]}'],
    ['another array before items', '{"xitems":[{"no":1}],"items":[{"yes":1}]}'],
  ])('gives the same items and rest as JSON.parse of the whole (%s), cut at every byte', (_name, text) => {
    const expected = whole(text);
    const bytes = Buffer.byteLength(text);
    expect(split(text)).toEqual(expected);
    for (let cut = 0; cut <= bytes; cut++) expect(split(text, [cut])).toEqual(expected);
    // One byte at a time: every escape, quote and bracket on a chunk's edge.
    expect(
      split(
        text,
        Array.from({ length: bytes }, (_, i) => i),
      ),
    ).toEqual(expected);
  });

  it('hands each item over as soon as its last byte is in, before the list ends', () => {
    const text = JSON.stringify({ metadata: {}, items: [{ n: 1 }, { n: 2 }, { n: 3 }] });
    const seen: unknown[] = [];
    const splitter = new ListItemSplitter((item) => seen.push(item));
    const firstEnds = text.indexOf('{"n":1}') + '{"n":1}'.length;
    splitter.write(Buffer.from(text.slice(0, firstEnds - 1)));
    expect(seen).toEqual([]);
    splitter.write(Buffer.from(text.slice(firstEnds - 1, firstEnds)));
    expect(seen).toEqual([{ n: 1 }]);
  });

  it.each([
    ['an item that is not an object', '{"items":[{"a":1},"b"]}', /not an object/],
    ['an answer cut inside an item', '{"items":[{"a":1},{"b":', /ended before the list did/],
    ['an answer cut inside a string', '{"items":[{"a":"b', /ended before the list did/],
    ['an item that is not JSON', '{"items":[{"a":tru}]}', SyntaxError],
  ])('fails with a clear error on %s', (_name, text, error) => {
    expect(() => split(text)).toThrow(error);
  });

  it('stops at an exception of the item handler and rethrows it', () => {
    const splitter = new ListItemSplitter(() => {
      throw new Error('cache full');
    });
    expect(() => splitter.write(Buffer.from('{"items":[{"a":1}]}'))).toThrow('cache full');
  });
});

describe('ListItemSplitter with stripManagedFields: the items without their metadata.managedFields', () => {
  const managed = [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      time: '2026-11-29T17:48:02Z',
      fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, 'f:a]},{"': {} } } },
    },
  ];
  const list = {
    kind: 'PersistentVolumeClaimList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '9', managedFields: "the list's own: kept" },
    items: [
      {
        metadata: { name: 'a', annotations: { note: ',"managedFields":[1]' }, managedFields: managed, uid: 'u' },
        spec: { managedFields: ['not metadata: kept'] },
      },
      { metadata: { name: 'b', managedFields: [] }, status: { phase: 'Bound' } },
      { metadata: { name: 'c' } },
    ],
  };
  const text = JSON.stringify(list);
  /** What is left of the items once their metadata.managedFields are dropped. */
  const stripped = (items: unknown[]): unknown[] =>
    (items as { metadata: Record<string, unknown> }[]).map(
      ({ metadata: { managedFields: _m, ...metadata }, ...rest }) => ({
        metadata,
        ...rest,
      }),
    );

  it('leaves them out of the items as Go encodes them, and nothing else', () => {
    const { items, list: rest } = split(text, [], { stripManagedFields: true });
    expect(items).toEqual(stripped(list.items));
    expect(rest).toEqual({ ...list, items: [] });
    // Without the option they are parsed.
    expect(split(text).items).toEqual(list.items);
  });

  it('parses them with the item where the key comes first or the JSON is indented', () => {
    const first = JSON.stringify({ items: [{ metadata: { managedFields: managed, name: 'a' } }] });
    expect(split(first, [], { stripManagedFields: true }).items).toEqual(JSON.parse(first).items);
    const indented = JSON.stringify(list, null, 2);
    expect(split(indented, [], { stripManagedFields: true }).items).toEqual(list.items);
  });

  it('gives the same items otherwise, wherever the chunks are cut', () => {
    const bytes = Buffer.byteLength(text);
    const expected = stripped(list.items);
    for (let cut = 0; cut <= bytes; cut++) {
      expect(stripped(split(text, [cut], { stripManagedFields: true }).items)).toEqual(expected);
    }
    const oneByOne = split(
      text,
      Array.from({ length: bytes }, (_, i) => i),
      { stripManagedFields: true },
    );
    expect(stripped(oneByOne.items)).toEqual(expected);
    expect(oneByOne.list).toEqual({ ...list, items: [] });
  });
});
