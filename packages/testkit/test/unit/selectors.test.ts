import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/objects.js';
import { StatusError, type Status } from '../../src/api/status.js';
import { fieldsOf, matchesFields, parseFieldSelector, validateFieldSelector } from '../../src/selectors/fields.js';
import { labelSelectorFromObject, matchesLabels, parseLabelSelector } from '../../src/selectors/labels.js';

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

/** The message of the 400 BadRequest a call fails with. */
function badRequestMessage(fn: () => unknown): string | undefined {
  const s = failure(fn);
  expect(s.code).toBe(400);
  expect(s.reason).toBe('BadRequest');
  return s.message;
}

const NAME_PART =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const matches = (selector: string, labels?: Record<string, string>): boolean =>
  matchesLabels(parseLabelSelector(selector), labels);

describe('label selector parsing', () => {
  it('treats the empty string and blank text as selecting everything', () => {
    expect(parseLabelSelector('').requirements).toEqual([]);
    expect(parseLabelSelector('  \t ').requirements).toEqual([]);
    expect(matches('', { a: 'b' })).toBe(true);
    expect(matches('', undefined)).toBe(true);
  });

  it('reads every operator into a requirement, sorted by key', () => {
    const sel = parseLabelSelector('z=1,y==2,x!=3,w in (b,a),v notin (c),u,!t,s>4,r<5');
    expect(sel.requirements).toEqual([
      { key: 'r', operator: 'lt', values: ['5'] },
      { key: 's', operator: 'gt', values: ['4'] },
      { key: 't', operator: '!', values: [] },
      { key: 'u', operator: 'exists', values: [] },
      { key: 'v', operator: 'notin', values: ['c'] },
      { key: 'w', operator: 'in', values: ['a', 'b'] },
      { key: 'x', operator: '!=', values: ['3'] },
      { key: 'y', operator: '==', values: ['2'] },
      { key: 'z', operator: '=', values: ['1'] },
    ]);
    expect(sel.matchesNothing).toBe(false);
  });

  it('tolerates whitespace around every token', () => {
    const sel = parseLabelSelector('  app = web ,  tier in ( front , back ) , ! legacy ');
    expect(sel.requirements).toEqual([
      { key: 'app', operator: '=', values: ['web'] },
      { key: 'legacy', operator: '!', values: [] },
      { key: 'tier', operator: 'in', values: ['back', 'front'] },
    ]);
  });

  it('accepts prefixed keys', () => {
    expect(parseLabelSelector('app.kubernetes.io/name=web').requirements[0]?.key).toBe('app.kubernetes.io/name');
  });

  it('reads an empty exact value and empty set members as the empty string', () => {
    expect(parseLabelSelector('a=').requirements[0]?.values).toEqual(['']);
    expect(parseLabelSelector('a=,b').requirements[0]?.values).toEqual(['']);
    expect(parseLabelSelector('a in ()').requirements[0]?.values).toEqual(['']);
    expect(parseLabelSelector('a in (x,,y)').requirements[0]?.values).toEqual(['', 'x', 'y']);
    expect(parseLabelSelector('a in (,x)').requirements[0]?.values).toEqual(['', 'x']);
    expect(parseLabelSelector('a in (x,)').requirements[0]?.values).toEqual(['', 'x']);
  });

  it('reads the keywords in and notin as plain values', () => {
    expect(parseLabelSelector('a in (in,notin)').requirements[0]?.values).toEqual(['in', 'notin']);
    expect(parseLabelSelector('a=in').requirements[0]?.values).toEqual(['in']);
  });

  it('removes duplicate values', () => {
    expect(parseLabelSelector('a in (x,x,y)').requirements[0]?.values).toEqual(['x', 'y']);
  });
});

describe('label selector parse errors', () => {
  it.each([
    ['a in', "unable to parse requirement: found '' expected: '('"],
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
    ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['a in (b,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a==(b', "unable to parse requirement: found '(', expected: identifier"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
    ['! =a', "unable to parse requirement: found '=', expected: identifier"],
    ['a=b,', "found '', expected: identifier after ','"],
    ['a=b,,c', "found ',', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['(a)', "found '(', expected: !, identifier, or 'end of string'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
  ])('rejects %j with the apiserver message', (selector, message) => {
    expect(badRequestMessage(() => parseLabelSelector(selector))).toBe(message);
  });

  it('rejects an invalid key with the nil field path of the key check', () => {
    expect(badRequestMessage(() => parseLabelSelector('a@b=c'))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "a@b": name part ${NAME_PART}`,
    );
    expect(badRequestMessage(() => parseLabelSelector('app:monolith'))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "app:monolith": name part ${NAME_PART}`,
    );
  });

  it('rejects a key with more than one slash', () => {
    expect(badRequestMessage(() => parseLabelSelector('a/b/c'))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${NAME_PART} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    );
  });

  it('rejects an empty or non-DNS key prefix', () => {
    expect(badRequestMessage(() => parseLabelSelector('/x'))).toBe(
      'unable to parse requirement: <nil>: Invalid value: "/x": prefix part must be non-empty',
    );
    expect(badRequestMessage(() => parseLabelSelector('app.kubernetes_io/name=x'))).toBe(
      "unable to parse requirement: <nil>: Invalid value: \"app.kubernetes_io/name\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  });

  it('rejects an empty name part and a name part over 63 characters', () => {
    expect(badRequestMessage(() => parseLabelSelector('example.com/'))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "example.com/": name part must be non-empty; name part ${NAME_PART}`,
    );
    const long = 'k'.repeat(64);
    expect(badRequestMessage(() => parseLabelSelector(long))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "${long}": name part must be no more than 63 characters`,
    );
  });

  it('rejects an invalid value under the values path of the requirement', () => {
    expect(badRequestMessage(() => parseLabelSelector('a=b@c'))).toBe(
      `unable to parse requirement: values[0][a]: Invalid value: "b@c": ${LABEL_VALUE}`,
    );
    const long = 'v'.repeat(64);
    // Values are checked in sorted order, so the long value is the second one here.
    expect(badRequestMessage(() => parseLabelSelector(`a in (${long},a)`))).toBe(
      `unable to parse requirement: values[1][a]: Invalid value: "${long}": must be no more than 63 characters`,
    );
  });

  it('rejects a non-integer bound of gt and lt', () => {
    expect(badRequestMessage(() => parseLabelSelector('environment>qa'))).toBe(
      `unable to parse requirement: values[0]: Invalid value: "qa": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
  });

  it('rejects a negative bound, which is no valid label value', () => {
    expect(badRequestMessage(() => parseLabelSelector('n<-1'))).toBe(
      `unable to parse requirement: values[0][n]: Invalid value: "-1": ${LABEL_VALUE}`,
    );
  });

  it('lists several problems of one requirement in brackets', () => {
    expect(badRequestMessage(() => parseLabelSelector('a<1.5@'))).toBe(
      `unable to parse requirement: [values[0]: Invalid value: "1.5@": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: "1.5@": ${LABEL_VALUE}]`,
    );
  });
});

describe('label selector matching', () => {
  it('matches = and == only when the label has the value', () => {
    expect(matches('a=1', { a: '1' })).toBe(true);
    expect(matches('a==1', { a: '1' })).toBe(true);
    expect(matches('a=1', { a: '2' })).toBe(false);
    expect(matches('a=1', {})).toBe(false);
    expect(matches('a=', { a: '' })).toBe(true);
  });

  it('matches != when the label differs or is missing', () => {
    expect(matches('a!=1', { a: '2' })).toBe(true);
    expect(matches('a!=1', {})).toBe(true);
    expect(matches('a!=1', undefined)).toBe(true);
    expect(matches('a!=1', { a: '1' })).toBe(false);
  });

  it('matches in when the label has one of the values', () => {
    expect(matches('a in (1,2)', { a: '2' })).toBe(true);
    expect(matches('a in (1,2)', { a: '3' })).toBe(false);
    expect(matches('a in (1,2)', {})).toBe(false);
    expect(matches('a in ()', { a: '' })).toBe(true);
  });

  it('matches notin when the label has none of the values or is missing', () => {
    expect(matches('a notin (1,2)', { a: '3' })).toBe(true);
    expect(matches('a notin (1,2)', {})).toBe(true);
    expect(matches('a notin (1,2)', { a: '1' })).toBe(false);
  });

  it('matches exists and !, whatever the value', () => {
    expect(matches('a', { a: '' })).toBe(true);
    expect(matches('a', { b: 'x' })).toBe(false);
    expect(matches('!a', { b: 'x' })).toBe(true);
    expect(matches('!a', undefined)).toBe(true);
    expect(matches('!a', { a: 'x' })).toBe(false);
  });

  it('compares gt and lt as integers and never matches a missing or non-integer label', () => {
    expect(matches('n>9', { n: '10' })).toBe(true);
    expect(matches('n>10', { n: '10' })).toBe(false);
    expect(matches('n<0', { n: '-2' })).toBe(true);
    expect(matches('n<10', { n: '9' })).toBe(true);
    expect(matches('n>1', { n: 'x' })).toBe(false);
    expect(matches('n>1', {})).toBe(false);
    expect(matches('n<1', {})).toBe(false);
  });

  it('requires every requirement of a comma-joined selector', () => {
    expect(matches('a=1,b', { a: '1', b: '' })).toBe(true);
    expect(matches('a=1,b', { a: '1' })).toBe(false);
  });

  it('does not read inherited properties as labels', () => {
    expect(matches('toString', {})).toBe(false);
    expect(matches('!constructor', {})).toBe(true);
  });
});

describe('metav1.LabelSelector objects', () => {
  it('selects nothing for a null or absent selector', () => {
    expect(labelSelectorFromObject(null).matchesNothing).toBe(true);
    expect(matchesLabels(labelSelectorFromObject(undefined), {})).toBe(false);
  });

  it('selects everything for an empty selector', () => {
    const sel = labelSelectorFromObject({});
    expect(sel.requirements).toEqual([]);
    expect(matchesLabels(sel, undefined)).toBe(true);
    expect(matchesLabels(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }), { a: 'b' })).toBe(true);
  });

  it('turns matchLabels into equality requirements', () => {
    const sel = labelSelectorFromObject({ matchLabels: { zone: 'a', 'topology.kubernetes.io/region': 'r1' } });
    expect(sel.requirements).toEqual([
      { key: 'topology.kubernetes.io/region', operator: '=', values: ['r1'] },
      { key: 'zone', operator: '=', values: ['a'] },
    ]);
    expect(matchesLabels(sel, { zone: 'a', 'topology.kubernetes.io/region': 'r1' })).toBe(true);
    expect(matchesLabels(sel, { zone: 'a' })).toBe(false);
  });

  it('supports the In, NotIn, Exists and DoesNotExist operators', () => {
    const sel = labelSelectorFromObject({
      matchExpressions: [
        { key: 'zone', operator: 'In', values: ['a', 'b'] },
        { key: 'tier', operator: 'NotIn', values: ['db'] },
        { key: 'ssd', operator: 'Exists' },
        { key: 'gpu', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(matchesLabels(sel, { zone: 'b', ssd: 'true' })).toBe(true);
    expect(matchesLabels(sel, { zone: 'c', ssd: 'true' })).toBe(false);
    expect(matchesLabels(sel, { zone: 'a', ssd: 'true', tier: 'db' })).toBe(false);
    expect(matchesLabels(sel, { zone: 'a' })).toBe(false);
    expect(matchesLabels(sel, { zone: 'a', ssd: '', gpu: '1' })).toBe(false);
  });

  it('ANDs matchLabels with matchExpressions', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }],
    });
    expect(matchesLabels(sel, { app: 'web', zone: 'a' })).toBe(true);
    expect(matchesLabels(sel, { app: 'web', zone: 'b' })).toBe(false);
  });

  it('rejects an unknown operator', () => {
    expect(
      badRequestMessage(() =>
        labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }),
      ),
    ).toBe('"Gt" is not a valid label selector operator');
  });

  it('rejects In and NotIn without values and Exists with values', () => {
    expect(
      badRequestMessage(() =>
        labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      ),
    ).toBe("values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty");
    expect(
      badRequestMessage(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'NotIn' }] })),
    ).toBe("values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty");
    expect(
      badRequestMessage(() =>
        labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
      ),
    ).toBe('values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist');
  });

  it('rejects an invalid key or value under the requirement paths', () => {
    expect(badRequestMessage(() => labelSelectorFromObject({ matchLabels: { 'a b': 'c' } }))).toBe(
      `key: Invalid value: "a b": name part ${NAME_PART}`,
    );
    expect(badRequestMessage(() => labelSelectorFromObject({ matchLabels: { a: 'c d' } }))).toBe(
      `values[0][a]: Invalid value: "c d": ${LABEL_VALUE}`,
    );
  });
});

describe('field selector parsing', () => {
  it('reads =, == and != terms, sorted as the real parser sorts them', () => {
    expect(parseFieldSelector('status.phase!=Running,spec.nodeName==n1,metadata.name=a').requirements).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a' },
      { field: 'spec.nodeName', operator: '==', value: 'n1' },
      { field: 'status.phase', operator: '!=', value: 'Running' },
    ]);
  });

  it('selects everything for the empty string and skips empty terms', () => {
    expect(parseFieldSelector('').requirements).toEqual([]);
    expect(parseFieldSelector(',a=b,,').requirements).toEqual([{ field: 'a', operator: '=', value: 'b' }]);
  });

  it('splits a term at its first operator', () => {
    expect(parseFieldSelector('a=!b').requirements).toEqual([{ field: 'a', operator: '=', value: '!b' }]);
    expect(parseFieldSelector('a!=b').requirements).toEqual([{ field: 'a', operator: '!=', value: 'b' }]);
  });

  it('unescapes backslash-escaped backslashes, commas and equals signs in values', () => {
    expect(parseFieldSelector('a=x\\,y\\=z\\\\w,b=1').requirements).toEqual([
      { field: 'a', operator: '=', value: 'x,y=z\\w' },
      { field: 'b', operator: '=', value: '1' },
    ]);
  });

  it('keeps whitespace, which the real parser does not trim', () => {
    expect(parseFieldSelector(' a = b').requirements).toEqual([{ field: ' a ', operator: '=', value: ' b' }]);
  });

  it('drops a term whose field and value are both empty', () => {
    expect(parseFieldSelector('=').requirements).toEqual([]);
    expect(parseFieldSelector('=x').requirements).toEqual([{ field: '', operator: '=', value: 'x' }]);
  });

  it('rejects a term without an operator', () => {
    expect(badRequestMessage(() => parseFieldSelector('metadata.name'))).toBe(
      "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    );
    expect(badRequestMessage(() => parseFieldSelector('b=1,a'))).toBe(
      "invalid selector: 'b=1,a'; can't understand 'a'",
    );
  });

  it('rejects an unescaped comma or equals sign in a value, printing its code point', () => {
    expect(badRequestMessage(() => parseFieldSelector('a=b=c'))).toBe(
      'invalid field selector: unescaped character in value: 61',
    );
  });

  it('rejects an unknown escape and a trailing backslash', () => {
    expect(badRequestMessage(() => parseFieldSelector('a=b\\x'))).toBe(
      'invalid field selector: invalid escape sequence: \\x',
    );
    expect(badRequestMessage(() => parseFieldSelector('a=b\\'))).toBe(
      'invalid field selector: invalid escape sequence: \\',
    );
  });
});

describe('field selector matching', () => {
  it('matches equality and inequality', () => {
    const fields = { 'status.phase': 'Running' };
    expect(matchesFields(parseFieldSelector('status.phase=Running'), fields)).toBe(true);
    expect(matchesFields(parseFieldSelector('status.phase==Pending'), fields)).toBe(false);
    expect(matchesFields(parseFieldSelector('status.phase!=Pending'), fields)).toBe(true);
    expect(matchesFields(parseFieldSelector('status.phase!=Running'), fields)).toBe(false);
  });

  it('reads a missing field as the empty string', () => {
    expect(matchesFields(parseFieldSelector('spec.nodeName='), {})).toBe(true);
    expect(matchesFields(parseFieldSelector('spec.nodeName!='), {})).toBe(false);
    expect(matchesFields(parseFieldSelector('spec.nodeName=n1'), {})).toBe(false);
  });

  it('requires every term', () => {
    const fields = { a: '1', b: '2' };
    expect(matchesFields(parseFieldSelector('a=1,b=2'), fields)).toBe(true);
    expect(matchesFields(parseFieldSelector('a=1,b=3'), fields)).toBe(false);
  });
});

describe('field selector validation', () => {
  const check = (key: string, selector: string): void => validateFieldSelector(key, parseFieldSelector(selector));

  it('accepts every field label the real pod conversion accepts', () => {
    expect(() =>
      check(
        'pods',
        'metadata.name=a,metadata.namespace=b,spec.nodeName=c,spec.restartPolicy=Always,spec.schedulerName=s,spec.serviceAccountName=sa,spec.hostNetwork=false,status.phase=Running,status.podIP=1.2.3.4,status.podIPs=x,status.nominatedNodeName=n,spec.host=h',
      ),
    ).not.toThrow();
  });

  it('rejects other pod fields with field label not supported', () => {
    expect(badRequestMessage(() => check('pods', 'spec.containers=x'))).toBe(
      'field label not supported: spec.containers',
    );
  });

  it('accepts spec.unschedulable for nodes and rejects metadata.namespace there', () => {
    expect(() => check('nodes', 'metadata.name=n,spec.unschedulable=true')).not.toThrow();
    expect(badRequestMessage(() => check('nodes', 'metadata.namespace=x'))).toBe(
      'field label not supported: metadata.namespace',
    );
  });

  it('accepts status.phase for namespaces and type for secrets', () => {
    expect(() => check('namespaces', 'status.phase=Active,metadata.name=x')).not.toThrow();
    expect(badRequestMessage(() => check('namespaces', 'metadata.namespace=x'))).toBe(
      'field label not supported: metadata.namespace',
    );
    expect(() => check('secrets', 'type=Opaque,metadata.name=x,metadata.namespace=y')).not.toThrow();
    expect(badRequestMessage(() => check('secrets', 'data=x'))).toBe('field label not supported: data');
  });

  it('accepts the involvedObject fields, reason, reportingComponent, source and type for core events', () => {
    expect(() =>
      check(
        'events',
        'involvedObject.kind=Pod,involvedObject.namespace=d,involvedObject.name=p,involvedObject.uid=u,involvedObject.apiVersion=v1,involvedObject.resourceVersion=1,involvedObject.fieldPath=f,reason=r,reportingComponent=c,source=s,type=Normal,metadata.name=e,metadata.namespace=d',
      ),
    ).not.toThrow();
    expect(badRequestMessage(() => check('events', 'regarding.name=p'))).toBe(
      'field label not supported: regarding.name',
    );
  });

  it('accepts the regarding fields and reportingController for events.k8s.io events', () => {
    expect(() =>
      check(
        'events.k8s.io/events',
        'regarding.kind=Pod,regarding.namespace=d,regarding.name=p,regarding.uid=u,regarding.apiVersion=v1,regarding.resourceVersion=1,regarding.fieldPath=f,reason=r,reportingController=c,source=s,type=Normal,metadata.name=e,metadata.namespace=d',
      ),
    ).not.toThrow();
    expect(badRequestMessage(() => check('events.k8s.io/events', 'involvedObject.name=p'))).toBe(
      'field label not supported: involvedObject.name',
    );
  });

  it('accepts only metadata.name and metadata.namespace for kinds without their own conversion, such as PVCs', () => {
    for (const key of [
      'persistentvolumeclaims',
      'persistentvolumes',
      'configmaps',
      'serviceaccounts',
      'storage.k8s.io/storageclasses',
      'coordination.k8s.io/leases',
    ]) {
      expect(() => check(key, 'metadata.name=a,metadata.namespace=b')).not.toThrow();
    }
    expect(badRequestMessage(() => check('persistentvolumeclaims', 'status.phase=Bound'))).toBe(
      '"status.phase" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    expect(badRequestMessage(() => check('storage.k8s.io/storageclasses', 'provisioner=x'))).toBe(
      '"provisioner" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });

  it('reports the first unsupported term in sorted order', () => {
    expect(badRequestMessage(() => check('pods', 'zeta=1,alpha=2'))).toBe('field label not supported: alpha');
  });
});

describe('selectable fields of objects', () => {
  it('gives a pod its name, namespace and pod fields', () => {
    const pod: KubeObject = {
      metadata: { name: 'p', namespace: 'd' },
      spec: {
        nodeName: 'n1',
        restartPolicy: 'Always',
        schedulerName: 'default-scheduler',
        serviceAccountName: 'sa',
        hostNetwork: true,
      },
      status: {
        phase: 'Running',
        podIP: '10.0.0.9',
        podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }],
        nominatedNodeName: 'n2',
      },
    };
    expect(fieldsOf('pods', pod)).toEqual({
      'metadata.name': 'p',
      'metadata.namespace': 'd',
      'spec.nodeName': 'n1',
      'spec.host': 'n1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'sa',
      'spec.hostNetwork': 'true',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.1',
      'status.nominatedNodeName': 'n2',
    });
  });

  it('fills absent pod fields with empty strings and hostNetwork with false', () => {
    const fields = fieldsOf('pods', { metadata: { name: 'p', namespace: 'd' }, status: { podIP: '10.0.0.9' } });
    expect(fields['spec.nodeName']).toBe('');
    expect(fields['status.phase']).toBe('');
    expect(fields['spec.hostNetwork']).toBe('false');
    expect(fields['status.podIP']).toBe('10.0.0.9');
  });

  it('selects pods by status.phase end to end', () => {
    const sel = parseFieldSelector('status.phase=Running,spec.nodeName!=');
    validateFieldSelector('pods', sel);
    const running: KubeObject = {
      metadata: { name: 'a', namespace: 'd' },
      spec: { nodeName: 'n' },
      status: { phase: 'Running' },
    };
    const pending: KubeObject = { metadata: { name: 'b', namespace: 'd' }, spec: {}, status: { phase: 'Pending' } };
    expect(matchesFields(sel, fieldsOf('pods', running))).toBe(true);
    expect(matchesFields(sel, fieldsOf('pods', pending))).toBe(false);
  });

  it('gives a node spec.unschedulable and no namespace', () => {
    expect(fieldsOf('nodes', { metadata: { name: 'n' }, spec: { unschedulable: true } })).toEqual({
      'metadata.name': 'n',
      'spec.unschedulable': 'true',
    });
    expect(fieldsOf('nodes', { metadata: { name: 'n' } })['spec.unschedulable']).toBe('false');
  });

  it('gives a namespace status.phase and a secret its type', () => {
    expect(fieldsOf('namespaces', { metadata: { name: 'd' }, status: { phase: 'Terminating' } })).toEqual({
      'metadata.name': 'd',
      'status.phase': 'Terminating',
    });
    expect(fieldsOf('secrets', { metadata: { name: 's', namespace: 'd' }, type: 'kubernetes.io/tls' })).toEqual({
      'metadata.name': 's',
      'metadata.namespace': 'd',
      type: 'kubernetes.io/tls',
    });
  });

  it('gives a PVC only its name and namespace, and a cluster-scoped StorageClass only its name', () => {
    expect(
      fieldsOf('persistentvolumeclaims', { metadata: { name: 'c', namespace: 'd' }, status: { phase: 'Bound' } }),
    ).toEqual({
      'metadata.name': 'c',
      'metadata.namespace': 'd',
    });
    expect(fieldsOf('storage.k8s.io/storageclasses', { metadata: { name: 'fast' } })).toEqual({
      'metadata.name': 'fast',
    });
  });

  it('gives a core event its involved object, reason, reporting component, source and type', () => {
    const event: KubeObject = {
      metadata: { name: 'e', namespace: 'd' },
      involvedObject: {
        kind: 'PersistentVolumeClaim',
        namespace: 'd',
        name: 'c',
        uid: 'u',
        apiVersion: 'v1',
        resourceVersion: '7',
        fieldPath: '',
      },
      reason: 'ProvisioningSucceeded',
      reportingComponent: 'kprov',
      source: { component: 'kprov-controller' },
      type: 'Normal',
    };
    expect(fieldsOf('events', event)).toEqual({
      'metadata.name': 'e',
      'metadata.namespace': 'd',
      'involvedObject.kind': 'PersistentVolumeClaim',
      'involvedObject.namespace': 'd',
      'involvedObject.name': 'c',
      'involvedObject.uid': 'u',
      'involvedObject.apiVersion': 'v1',
      'involvedObject.resourceVersion': '7',
      'involvedObject.fieldPath': '',
      reason: 'ProvisioningSucceeded',
      reportingComponent: 'kprov',
      source: 'kprov-controller',
      type: 'Normal',
    });
  });

  it('falls back to the reporting component for the source of an event', () => {
    expect(fieldsOf('events', { metadata: { name: 'e', namespace: 'd' }, reportingComponent: 'kprov' }).source).toBe(
      'kprov',
    );
  });

  it('gives an events.k8s.io event its regarding fields under both naming schemes', () => {
    const event: KubeObject = {
      metadata: { name: 'e', namespace: 'd' },
      regarding: { kind: 'Pod', namespace: 'd', name: 'p', uid: 'u' },
      reason: 'Started',
      reportingController: 'kubelet',
      type: 'Normal',
    };
    const fields = fieldsOf('events.k8s.io/events', event);
    expect(fields['regarding.name']).toBe('p');
    expect(fields['involvedObject.name']).toBe('p');
    expect(fields['regarding.apiVersion']).toBe('');
    expect(fields.reportingController).toBe('kubelet');
    expect(fields.source).toBe('kubelet');
    const sel = parseFieldSelector('regarding.kind=Pod,reportingController=kubelet');
    validateFieldSelector('events.k8s.io/events', sel);
    expect(matchesFields(sel, fields)).toBe(true);
  });
});
