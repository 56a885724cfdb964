// What the controller process costs before it does anything: Node.js with client-node and the library imported and
// a KubeConfig loaded, nothing running. Run as the controller is (same Node.js flags and memory limit); prints its
// memory after two full GCs as JSON.
import process from 'node:process';
import { lib, loadKubeConfig } from './lean.js';

const kc = loadKubeConfig(process.argv[2]);
lib.sharedAgent(kc);
globalThis.gc?.();
globalThis.gc?.();
process.stdout.write(`${JSON.stringify(process.memoryUsage())}\n`);
