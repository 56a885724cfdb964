// Test helpers: run one inline template, or render an inline chart, with the renderer's real parser and executor.
import { renderChart, type RenderedChart } from './chart.js';
import { Executor } from './exec.js';
import { FUNCTIONS, PARSE_OPTIONS } from './functions.js';
import type { GoMap } from './go-values.js';
import { parseTemplate, type Template } from '../../../src/volume/text-template.js';

/** Executes `source` (named t.yaml) with `data` as dot, as plain text/template with Helm's functions. */
export function run(source: string, data: unknown = {}): string {
  const parsed = parseTemplate('t.yaml', source, PARSE_OPTIONS);
  const templates = new Map<string, Template>([['t.yaml', { name: 't.yaml', file: 't.yaml', root: parsed.root }]]);
  for (const d of parsed.defines) templates.set(d.name, d);
  return new Executor(templates, FUNCTIONS).execute('t.yaml', data);
}

/** Renders a chart `demo` 1.2.3 (appVersion 1.0) made of `templates` (file name to text) and `values`. */
export function renderInline(
  templates: Record<string, string>,
  values: GoMap = {},
  userValues: GoMap = {},
): RenderedChart {
  return renderChart(
    {
      metadata: { apiVersion: 'v2', name: 'demo', version: '1.2.3', appVersion: '1.0' },
      values,
      templates: new Map(Object.entries(templates).map(([k, v]) => [`templates/${k}`, v])),
    },
    { releaseName: 'rel', namespace: 'ns', values: userValues },
  );
}
