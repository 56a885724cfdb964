// `pnpm check:imports` (part of `pnpm check`): no folder of a package imports a folder that imports it back.
//
// The rule holds among sibling folders, at every level of src/: src/config/ and src/capacity/, or
// src/executor/helper-pod/ and src/executor/node/. A folder stands for everything below it; the files that lie
// directly in a folder (entry points, an index, what its subfolders share) are its own, so a folder and its subfolders
// may use each other. Folder A depends on its sibling B when a file below A imports a file below B (`import`,
// `import type`, `export ... from`, `import()`; relative imports). The check fails, naming one import of each edge,
// when siblings depend on each other in a circle (a strongly connected set of more than one folder).
// It covers every package under packages/ that has a src/ folder.
//
//   node scripts/import-graph.ts
//
// Why a script and not a lint rule: eslint-plugin-import's `no-cycle` works on files, not folders, and is not among
// the project's dependencies; the folder rule needs only TypeScript's own import scanner (ts.preProcessFile).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The TypeScript files below `dir`. */
function sources(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) files.push(...sources(file));
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith('.d.ts')) files.push(file);
  }
  return files;
}

/** The file a relative import names, as a source file (`./a.js` → `a.ts`); undefined when there is none. */
function resolve(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|ts|mts)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.mts`, `${stem}.tsx`, path.join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

/** One import from a file below one folder into a file below a sibling. */
interface Edge {
  readonly from: string;
  readonly to: string;
  /** `file:line` of the import, relative to the package. */
  readonly where: string;
  readonly specifier: string;
}

/** The imports between files of a package's src/: importing file → imported file, with where and what. */
function imports(src: string): { from: string; to: string; where: string; specifier: string }[] {
  const found: { from: string; to: string; where: string; specifier: string }[] = [];
  for (const file of sources(src)) {
    const text = readFileSync(file, 'utf8');
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = resolve(file, ref.fileName);
      if (target === undefined || !target.startsWith(`${src}${path.sep}`)) continue;
      const line = text.slice(0, ref.pos).split('\n').length;
      found.push({
        from: file,
        to: target,
        where: `${path.relative(path.dirname(src), file)}:${line}`,
        specifier: ref.fileName,
      });
    }
  }
  return found;
}

/**
 * The graph of the subfolders of each folder of src/ (by its path relative to src/, `.` for src/ itself): subfolder
 * → sibling subfolder it imports from → the first such import.
 */
function siblingGraphs(src: string): Map<string, Map<string, Map<string, Edge>>> {
  const graphs = new Map<string, Map<string, Map<string, Edge>>>();
  const folders = (file: string): string[] =>
    path
      .relative(src, path.dirname(file))
      .split(path.sep)
      .filter((p) => p !== '');
  for (const i of imports(src)) {
    const a = folders(i.from);
    const b = folders(i.to);
    // The first level where the two paths part, below their common parent: both must have a folder there.
    let depth = 0;
    while (depth < a.length && depth < b.length && a[depth] === b[depth]) depth++;
    if (depth >= a.length || depth >= b.length) continue;
    const parent = a.slice(0, depth).join('/') || '.';
    const from = [...a.slice(0, depth + 1)].join('/');
    const to = [...b.slice(0, depth + 1)].join('/');
    const graph = graphs.get(parent) ?? new Map<string, Map<string, Edge>>();
    graphs.set(parent, graph);
    const edges = graph.get(from) ?? new Map<string, Edge>();
    graph.set(from, edges);
    if (!edges.has(to)) edges.set(to, { from, to, where: i.where, specifier: i.specifier });
  }
  return graphs;
}

/** Tarjan's strongly connected components with more than one folder: the folder cycles. */
function cycles(graph: Map<string, Map<string, Edge>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** The imports that tie a cycle's folders together, one per edge. */
function describe(component: readonly string[], graph: Map<string, Map<string, Edge>>): string[] {
  const inside = new Set(component);
  const lines: string[] = [];
  for (const from of component) {
    for (const edge of graph.get(from)?.values() ?? []) {
      if (inside.has(edge.to))
        lines.push(`      ${edge.from}/ → ${edge.to}/   ${edge.where} imports '${edge.specifier}'`);
    }
  }
  return lines;
}

let failed = false;
console.log('Folder cycles (no folder imports a sibling folder that imports it back):');
for (const name of readdirSync(path.join(ROOT, 'packages')).sort()) {
  const src = path.join(ROOT, 'packages', name, 'src');
  try {
    if (!statSync(src).isDirectory()) continue;
  } catch {
    continue;
  }
  const found: { component: string[]; graph: Map<string, Map<string, Edge>> }[] = [];
  for (const graph of siblingGraphs(src).values())
    for (const component of cycles(graph)) found.push({ component, graph });
  console.log(`  ${name}: ${found.length === 0 ? 'no cycle' : `${found.length} cycle(s)`}`);
  for (const { component, graph } of found) {
    console.log(`    ${component.map((f) => `${f}/`).join(' ⇄ ')}`);
    for (const line of describe(component, graph)) console.log(line);
  }
  if (found.length > 0) failed = true;
}
if (failed) {
  console.error('A package has folders that import each other: move what both need into one of them, or below both.');
  process.exitCode = 1;
}
