export { waitFor, type WaitForOptions } from './wait-for.js';
export { startNodeProcess, stopProcess, type StartNodeProcessOptions } from './node-process.js';
export { startServeProcess, type ServeProcess, type ServeProcessOptions } from './serve-process.js';
