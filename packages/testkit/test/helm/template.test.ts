/** helmTemplate: `helm template` of a small chart, its output parsed; helm's own error when it fails. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { helmTemplate } from '../../src/index.js';

let chart: string;

const TEMPLATES: Record<string, string> = {
  'configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
  {{- with .Values.extra }}
  extra: {{ . | quote }}
  {{- end }}
  replicas: {{ .Values.replicas | quote }}
`,
  'secret.yaml': `{{- if .Values.secret.enabled }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ required "secret.name is required when secret.enabled is true" .Values.secret.name }}
---
# only a comment
{{- end }}
`,
  'NOTES.txt': 'Installed {{ .Release.Name }}.\n',
  '_helpers.tpl': '{{- define "demo.unused" -}}x{{- end -}}\n',
};

beforeAll(async () => {
  chart = await mkdtemp(path.join(tmpdir(), 'kprov-helm-template-'));
  await mkdir(path.join(chart, 'templates'));
  await writeFile(path.join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 1.2.3\nappVersion: "1.0"\n');
  await writeFile(
    path.join(chart, 'values.yaml'),
    'greeting: hello\nextra: from-defaults\nreplicas: 1\nsecret:\n  enabled: false\n',
  );
  for (const [name, text] of Object.entries(TEMPLATES)) await writeFile(path.join(chart, 'templates', name), text);
});
afterAll(() => rm(chart, { recursive: true, force: true }));

describe('helmTemplate', () => {
  it('renders the chart with its own values for the release and namespace, NOTES.txt and empty documents left out', async () => {
    expect(await helmTemplate(chart, { releaseName: 'rel', namespace: 'ns' })).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'rel-config', namespace: 'ns' },
        data: { greeting: 'hello', extra: 'from-defaults', replicas: '1' },
      },
    ]);
  });

  it('merges values over values.yaml (null removes a default), then each set over those', async () => {
    const objects = await helmTemplate(chart, {
      releaseName: 'rel',
      namespace: 'ns',
      values: { greeting: 'hi', extra: null, replicas: 2, secret: { enabled: true, name: 'creds' } },
      set: { replicas: 3, 'secret.name': 'from-set' },
    });
    // In helm's install order: Secrets before ConfigMaps.
    expect(objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual(['Secret/from-set', 'ConfigMap/rel-config']);
    expect((objects[1] as unknown as { data: unknown }).data).toEqual({ greeting: 'hi', replicas: '3' });
  });

  it('passes extraArgs to helm template', async () => {
    const objects = await helmTemplate(chart, {
      releaseName: 'rel',
      namespace: 'ns',
      values: { secret: { enabled: true, name: 'creds' } },
      extraArgs: ['--show-only', 'templates/secret.yaml'],
    });
    expect(objects.map((o) => o.kind)).toEqual(['Secret']);
  });

  it("rejects with helm's own error when the chart fails to render", async () => {
    await expect(
      helmTemplate(chart, { releaseName: 'rel', namespace: 'ns', values: { secret: { enabled: true } } }),
    ).rejects.toThrow(
      /Error: execution error at \(demo\/templates\/secret\.yaml:5:11\): secret\.name is required when secret\.enabled is true/,
    );
    await expect(helmTemplate(path.join(chart, 'missing'), { releaseName: 'rel', namespace: 'ns' })).rejects.toThrow(
      /^helm template rel .*missing --namespace ns failed \(exit code 1\):\nError: path .*missing" not found/,
    );
  });
});
