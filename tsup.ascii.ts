import type { Options } from 'tsup';

type TsupPlugin = NonNullable<Options['plugins']>[number];

/**
 * Keeps a build's JavaScript ASCII. esbuild escapes other characters in code, but copies the comments it keeps (the
 * JSDoc of class members) as they are, and a single such character makes V8 hold the whole module's source as a
 * UTF-16 string: twice its size, in the heap of every process that loads it (provisioner-lib's main chunk took 451 KB
 * instead of 225). Each one is written as its `\u` escape instead, which reads the same in a comment and means the
 * same character anywhere else. `pnpm check:ascii` checks the packages' builds.
 */
export const asciiOutput: TsupPlugin = {
  name: 'ascii-output',
  renderChunk(code, chunk) {
    if (chunk.type !== 'chunk') return undefined;
    const ascii = code.replace(NON_ASCII, escape);
    return ascii === code ? undefined : { code: ascii };
  },
};

const NON_ASCII = /[^\0-\x7f]/gu;

function escape(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
}
