import { describe, expect, it } from 'vitest';
import { EventKeys } from '../../src/events/event-keys.js';
import type { ObjectReference, PendingEvent } from '../../src/events/types.js';

const claim: ObjectReference = {
  kind: 'PersistentVolumeClaim',
  apiVersion: 'v1',
  namespace: 'team-a',
  name: 'data',
  uid: '5c1e7d4a-0000-4000-8000-000000000001',
};

function event(
  ref: Partial<ObjectReference> = {},
  fields: Partial<Omit<PendingEvent, 'involvedObject'>> = {},
): PendingEvent {
  const time = new Date(Date.UTC(2025, 0, 1));
  return {
    name: 'data.1',
    namespace: 'team-a',
    involvedObject: { ...claim, ...ref },
    source: { component: 'example.com/hostpath_node-1' },
    type: 'Normal',
    reason: 'Provisioning',
    message: 'External provisioner is provisioning volume for claim "team-a/data"',
    count: 1,
    firstTimestamp: time,
    lastTimestamp: time,
    ...fields,
  };
}

/** Events that differ in one field each, or whose fields run together into the same text. */
const distinct: PendingEvent[] = [
  event(),
  event({ namespace: 'team-ad', name: 'ata' }),
  event({ name: 'data-1', uid: '' }),
  event({ name: 'data-', uid: '1' }),
  event({ name: 'data', uid: '' }),
  event({ uid: undefined, apiVersion: '' }),
  event({ fieldPath: 'spec' }),
  event({ kind: 'PersistentVolume', namespace: undefined }),
  event({}, { source: { component: 'example.com/hostpath', host: 'node-1' } }),
  event({}, { source: { component: 'example.com/hostpath_node-1', host: '' } }),
  event({}, { type: 'Warning' }),
  event({}, { reason: 'ProvisioningFailed' }),
  event({}, { reason: 'Provisioning', message: '#0#' }),
  event({}, { reason: 'Provisioning#0#', message: '' }),
  event({}, { message: '3:abc' }),
  event({}, { message: 'abc' }),
];

type Kind = 'object' | 'similar' | 'identical';
const KINDS: readonly Kind[] = ['object', 'similar', 'identical'];

/** The tuple each kind of key stands for, as plain JSON: two keys must be equal exactly when these are. */
function tuple(kind: Kind, e: PendingEvent): string {
  const o = e.involvedObject;
  const object = [
    e.source.component,
    e.source.host ?? '',
    o.kind,
    o.namespace ?? '',
    o.name,
    o.uid ?? '',
    o.apiVersion ?? '',
  ];
  if (kind === 'object') return JSON.stringify(object);
  if (kind === 'similar') return JSON.stringify([...object, e.type, e.reason]);
  return JSON.stringify([...object, o.fieldPath ?? '', e.type, e.reason, e.message]);
}

/** Checks every pair of keys of `events`: equal exactly when they are of one kind and their tuples are equal. */
function expectSameSemantics(keys: EventKeys, events: readonly PendingEvent[]): void {
  const all = events.flatMap((e, i) => KINDS.map((kind) => ({ kind, i, key: keys[kind](e), tuple: tuple(kind, e) })));
  for (const a of all) {
    for (const b of all) {
      const same = a.kind === b.kind && a.tuple === b.tuple;
      expect(a.key === b.key, `${a.kind} key of event ${a.i} vs ${b.kind} key of event ${b.i}`).toBe(same);
    }
  }
}

describe('EventKeys', () => {
  it('gives equal keys to equal tuples and different keys to different ones, even where fields run together', () => {
    const keys = new EventKeys();
    expectSameSemantics(keys, distinct);
    // Events that differ only in what a key leaves out share that key.
    expect(keys.similar(event({ fieldPath: 'spec' }))).toBe(keys.similar(event()));
    expect(keys.object(event({}, { reason: 'Other' }))).toBe(keys.object(event()));
    // The same tuple from new objects and new strings: the same keys.
    const again = event({ name: ['d', 'a', 't', 'a'].join('') });
    for (const kind of KINDS) expect(keys[kind](again)).toBe(keys[kind](event()));
  });

  it('keeps the same semantics once its table of ids is full', () => {
    const keys = new EventKeys(2);
    const before = distinct.map((e) => keys.identical(e));
    // Values first seen after the table filled are written out in full, and always the same way.
    const late = [
      event({}, { reason: 'Late' }),
      event({ namespace: 'late' }),
      event({ namespace: 'lat', name: 'edata' }),
    ];
    expectSameSemantics(keys, [...distinct, ...late, ...late.map((e) => ({ ...e }))]);
    expect(distinct.map((e) => keys.identical(e))).toEqual(before);
  });
});
