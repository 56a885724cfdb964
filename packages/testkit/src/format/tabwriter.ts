/** Column alignment as Go's `text/tabwriter` does it, with the settings kubectl prints tables with. */

/** Cell layout settings, named as in `tabwriter.NewWriter`. */
export interface TabwriterSettings {
  /** Minimal cell width, padding included. */
  minWidth: number;
  /** Spaces added to the widest cell of a column. */
  padding: number;
}

/** kubectl's `printers.GetNewTabWriter`: minimal width 6, padding 3, padded with spaces. */
export const KUBECTL_TABWRITER: TabwriterSettings = { minWidth: 6, padding: 3 };

/** Width of a cell as tabwriter counts it: in Unicode code points. */
function cellWidth(cell: string): number {
  return Array.from(cell).length;
}

/**
 * Aligns tab-separated text. Every line's cells but the last are tab-terminated and belong to a column; a column
 * block is a run of adjacent lines that have that column, and each block is as wide as its widest cell plus the
 * padding (at least `minWidth`). The last cell of a line is written as is, so lines carry no trailing padding
 * unless their last cell is empty. Output lines end with `\n`, as the input's do.
 */
export function alignTabs(text: string, settings: TabwriterSettings = KUBECTL_TABWRITER): string {
  // The text after the last newline is a line without one (empty when the text ends with a newline).
  const cells = text.split('\n').map((l) => l.split('\t'));
  const widths: number[] = [];
  let out = '';

  const writeLines = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      for (const [j, cell] of (cells[i] ?? []).entries()) {
        const width = widths[j];
        out += width === undefined ? cell : cell + ' '.repeat(width - cellWidth(cell));
      }
      if (i + 1 < cells.length) out += '\n';
    }
  };

  // Text formats column by column, recursing into each block of lines that has one more column.
  const format = (first: number, end: number): void => {
    const column = widths.length;
    let line0 = first;
    for (let i = first; i < end; i++) {
      if (column >= (cells[i]?.length ?? 0) - 1) continue;
      writeLines(line0, i);
      line0 = i;
      let width = settings.minWidth;
      for (; i < end; i++) {
        const line = cells[i] ?? [];
        if (column >= line.length - 1) break;
        width = Math.max(width, cellWidth(line[column] ?? '') + settings.padding);
      }
      widths.push(width);
      format(line0, i);
      widths.pop();
      line0 = i;
    }
    writeLines(line0, end);
  };

  format(0, cells.length);
  return out;
}
