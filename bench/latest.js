// bench/results/latest.md holds one section per part of the bench (`## ...` headings). A run of one part
// (`--only`) replaces its own section and keeps the other part's from the last run.
import { readFile, rename, writeFile } from 'node:fs/promises';

/** Splits markdown into `## ` sections, keyed by their heading line. */
function sections(text) {
  const out = new Map();
  let heading;
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) {
      heading = line;
      out.set(heading, []);
    } else if (heading !== undefined) out.get(heading).push(line);
  }
  return new Map([...out].map(([h, lines]) => [h, [h, ...lines].join('\n').trimEnd()]));
}

/**
 * Writes `file` with `parts` (heading → markdown, in the order given; `undefined` keeps that heading's section
 * of the current file, if there is one), atomically.
 */
export async function writeLatest(file, parts) {
  const current = sections(await readFile(file, 'utf8').catch(() => ''));
  const text = [...parts]
    .map(([heading, markdown]) => markdown ?? current.get(heading))
    .filter((m) => m !== undefined)
    .map((m) => m.trimEnd())
    .join('\n\n');
  const tmp = `${file}.tmp`;
  await writeFile(tmp, `${text}\n`);
  await rename(tmp, file);
}
