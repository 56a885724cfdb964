export { waitFor, type WaitForOptions } from './wait-for.js';
export { startNodeProcess, stopProcess, type StartNodeProcessOptions } from './node-process.js';
