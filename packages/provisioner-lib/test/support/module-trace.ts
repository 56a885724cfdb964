/**
 * Preloaded into a child program (`NODE_OPTIONS=--import <this file>`): records the URL of every module the program
 * loads, and writes them, one per line, to the file `KPROV_MODULE_TRACE` names when the program exits.
 */
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const urls = new Set<string>();
registerHooks({
  load(url, context, nextLoad) {
    urls.add(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => writeFileSync(process.env.KPROV_MODULE_TRACE ?? 'module-trace.txt', [...urls].join('\n')));
