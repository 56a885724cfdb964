// What the controller process costs before it does anything: Node.js with client-node and the library loaded (from
// the module of KPROV_BENCH_BINARY, as controller.js loads them) and a KubeConfig loaded, nothing running. Run as the
// controller is (same Node.js flags and memory limit); prints its memory after two full GCs as JSON.
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const lib = await import(pathToFileURL(process.env.KPROV_BENCH_BINARY ?? '').href);
const kc = new lib.KubeConfig();
kc.loadFromFile(process.argv[2]);
globalThis.gc?.();
globalThis.gc?.();
process.stdout.write(`${JSON.stringify(process.memoryUsage())}\n`);
