import { describe, expect, it } from 'vitest';
import { manifestValidator, parseManifests, rulesAllow, type Manifest } from '../../src/manifests/manifests.js';

describe('parseManifests', () => {
  it('returns the objects of a YAML stream, skipping empty documents', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Secret\n';
    expect(parseManifests('f.yaml', text).map((m) => m.kind)).toEqual(['ConfigMap', 'Secret']);
  });

  it('refuses duplicate keys and documents that are not mappings, naming the file and document', () => {
    expect(() => parseManifests('f.yaml', 'kind: A\nkind: B\n')).toThrow(/^f\.yaml document 1: .*unique/i);
    expect(() => parseManifests('f.yaml', 'kind: A\n---\n- a list\n')).toThrow('f.yaml document 2: not a mapping');
  });
});

describe('manifestValidator', () => {
  class Widget {
    static readonly apiVersion = 'example.com/v1';
    static readonly kind = 'Widget';
    constructor(private readonly data: Manifest) {}
    validate(): void {
      if (typeof this.data.metadata !== 'object') throw new TypeError('metadata must be an object');
    }
  }

  it('validates the kinds it has a model for and refuses the others', () => {
    const validate = manifestValidator([Widget]);
    expect(() => validate({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: {} })).not.toThrow();
    expect(() => validate({ apiVersion: 'example.com/v1', kind: 'Widget' })).toThrow('metadata must be an object');
    expect(() => validate({ apiVersion: 'v1', kind: 'Widget' })).toThrow('no schema for apiVersion v1 kind Widget');
  });
});

describe('rulesAllow', () => {
  it('finds a grant, wildcards included', () => {
    const rules = [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      { apiGroups: ['storage.k8s.io'], resources: ['*'], verbs: ['*'] },
    ];
    expect(rulesAllow(rules, '', 'pods', 'list')).toBe(true);
    expect(rulesAllow(rules, '', 'pods', 'delete')).toBe(false);
    expect(rulesAllow(rules, 'storage.k8s.io', 'storageclasses', 'watch')).toBe(true);
    expect(rulesAllow(undefined, '', 'pods', 'get')).toBe(false);
  });
});
