/**
 * Lease-based leader election (a port of client-go's `tools/leaderelection` with its `LeaseLock`), with the Go
 * provisioner library's defaults and lease naming.
 */
export * from './config.js';
export * from './lease-lock.js';
export * from './lease-client.js';
export * from './elector.js';
