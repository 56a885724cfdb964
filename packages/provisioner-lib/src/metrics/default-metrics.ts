/**
 * prom-client 15's default metrics (`lib/defaultMetrics.js`), as the modules that register them, in its order, but
 * `processCpuTotal` (see `collectDefaultMetrics` in prom-client.ts). The runtime requires them by path, and a binary
 * bundle carries each (bundle/library-require.ts).
 */
export const DEFAULT_METRIC_MODULES: readonly string[] = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processResources',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
].map((name) => `prom-client/lib/metrics/${name}`);
