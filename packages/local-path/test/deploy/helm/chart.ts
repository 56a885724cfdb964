// `helm template` for one chart without dependencies: loads Chart.yaml, values.yaml and templates/, coalesces the
// given values, renders every template that is not a partial (a file whose name starts with "_"), blanks
// "<no value>" as Helm does, splits the output into documents at "---" lines and parses each as YAML; a document
// that is only whitespace or comments is dropped. NOTES.txt is rendered on its own, as Helm does.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { parseDocument } from 'yaml';
import { Executor } from './exec.js';
import { FUNCTIONS, PARSE_OPTIONS } from './functions.js';
import { GoStruct, Unimplemented, isMap, type GoMap } from './go-values.js';
import { parseTemplate, type Template } from '../../../src/volume/text-template.js';
import { asJsonData, coalesceValues, parseValues } from './values.js';

/** A chart read from disk. */
export interface Chart {
  /** Chart.yaml as read, keyed as in the file (apiVersion, name, version, appVersion, ...). */
  metadata: GoMap;
  /** values.yaml. */
  values: GoMap;
  /** The files under templates/, by their path relative to the chart directory (templates/x.yaml). */
  templates: Map<string, string>;
}

export interface RenderOptions {
  /** `.Release.Name`. Default: the chart's name. */
  releaseName?: string;
  /** `.Release.Namespace`. Default: `default`, as helm's. */
  namespace?: string;
  /** User values coalesced over values.yaml, as a file given with `helm template -f`. Default: none. */
  values?: GoMap;
}

/** One rendered Kubernetes object and the template it came from. */
export interface RenderedObject {
  source: string;
  object: { apiVersion: string; kind: string; metadata?: { name?: string; namespace?: string } } & GoMap;
}

export interface RenderedChart {
  /** Each rendered template's text (partials excluded), by Helm's template name `<chart>/templates/<file>`. */
  files: Map<string, string>;
  /** Every non-empty document of every template except NOTES.txt, in template path order. */
  objects: RenderedObject[];
  /** The rendered NOTES.txt, or undefined if the chart has none. */
  notes: string | undefined;
  /** The values the templates saw as `.Values`. */
  values: GoMap;
}

/** Reads the chart in `dir`. */
export function loadChart(dir: string): Chart {
  const metadata = parseValues(join(dir, 'Chart.yaml'), readFileSync(join(dir, 'Chart.yaml'), 'utf8'));
  const values = parseValues(join(dir, 'values.yaml'), readFileSync(join(dir, 'values.yaml'), 'utf8'));
  const templates = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else templates.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(join(dir, 'templates'));
  return { metadata, values, templates };
}

/** Go field names of chart.Metadata for the keys of Chart.yaml; any other field of .Chart is a template error. */
const METADATA_FIELDS: Record<string, [string, unknown]> = {
  name: ['Name', ''],
  home: ['Home', ''],
  sources: ['Sources', null],
  version: ['Version', ''],
  description: ['Description', ''],
  keywords: ['Keywords', null],
  maintainers: ['Maintainers', null],
  icon: ['Icon', ''],
  apiVersion: ['APIVersion', ''],
  condition: ['Condition', ''],
  tags: ['Tags', ''],
  appVersion: ['AppVersion', ''],
  deprecated: ['Deprecated', false],
  annotations: ['Annotations', null],
  kubeVersion: ['KubeVersion', ''],
  dependencies: ['Dependencies', null],
  type: ['Type', ''],
};

function chartObject(metadata: GoMap): GoStruct {
  const fields: Record<string, unknown> = {};
  for (const [key, [field, zero]] of Object.entries(METADATA_FIELDS)) fields[field] = metadata[key] ?? zero;
  for (const key of Object.keys(metadata)) {
    if (!(key in METADATA_FIELDS)) throw new Error(`Chart.yaml: unknown key ${key}`);
  }
  return new GoStruct('*chart.Metadata', fields);
}

const NOTES = 'NOTES.txt';

/** `helm template <releaseName> <chart> --namespace <namespace> -f <values>`. */
export function renderChart(chart: Chart, options: RenderOptions = {}): RenderedChart {
  const chartName = String(chart.metadata.name);
  if (isMap(chart.metadata.dependencies) || Array.isArray(chart.metadata.dependencies)) {
    throw new Error('chart dependencies (subcharts) are not implemented by the test renderer');
  }
  const values = coalesceValues(chart.values, asJsonData(options.values ?? {}, 'values') as GoMap);
  const templates = new Map<string, Template>();
  const names: string[] = [];
  for (const [path, text] of [...chart.templates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const name = `${chartName}/${path}`;
    const parsed = parseTemplate(name, text, PARSE_OPTIONS);
    templates.set(name, { name, file: name, root: parsed.root });
    names.push(name);
    for (const d of parsed.defines) {
      if (templates.has(d.name)) throw new Error(`${name}: template ${JSON.stringify(d.name)} is defined twice`);
      templates.set(d.name, d);
    }
  }
  const executor = new Executor(templates, FUNCTIONS);
  const release = {
    Name: options.releaseName ?? chartName,
    Namespace: options.namespace ?? 'default',
    IsUpgrade: false,
    IsInstall: true,
    Revision: 1n,
    Service: 'Helm',
  };
  const files = new Map<string, string>();
  const objects: RenderedObject[] = [];
  let notes: string | undefined;
  for (const name of names) {
    if (basename(name).startsWith('_')) continue;
    const data = {
      Values: values,
      Release: release,
      Chart: chartObject(chart.metadata),
      Capabilities: new Unimplemented('.Capabilities'),
      Files: new Unimplemented('.Files'),
      Subcharts: new Unimplemented('.Subcharts'),
      Template: { Name: name, BasePath: `${chartName}/templates` },
    };
    const text = executor.execute(name, data).replaceAll('<no value>', '');
    files.set(name, text);
    if (basename(name) === NOTES) notes = text;
    else objects.push(...splitDocuments(name, text));
  }
  return { files, objects, notes, values };
}

/** Helm's SplitManifests, then YAML: a document that parses to nothing (whitespace, comments) is dropped. */
function splitDocuments(source: string, text: string): RenderedObject[] {
  const out: RenderedObject[] = [];
  for (const [i, raw] of text
    .trim()
    .split(/(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*/)
    .entries()) {
    const doc = raw.trim();
    if (doc === '') continue;
    const parsed = parseDocument(doc, { version: '1.1', uniqueKeys: true, prettyErrors: true });
    const problems = [...parsed.errors, ...parsed.warnings];
    if (problems.length > 0) {
      throw new Error(
        `${source} document ${i + 1}: ${problems.map((p) => p.message).join('; ')}\n--- rendered:\n${doc}`,
      );
    }
    const value: unknown = parsed.toJS();
    if (value === null || value === undefined) continue;
    if (!isMap(value)) throw new Error(`${source} document ${i + 1}: not a mapping\n--- rendered:\n${doc}`);
    out.push({ source, object: value as RenderedObject['object'] });
  }
  return out;
}
