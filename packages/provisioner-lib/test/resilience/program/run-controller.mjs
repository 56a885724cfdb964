/**
 * A provisioner program whose only work is `await controller.run(signal)`: no HTTP listener, no timer or handle of
 * its own, the built library as a user installs it. SIGTERM aborts the run. It writes one JSON line per log line
 * and per controller event to stdout, and sets exit code 3 when the run rejects with LeaderElectionLostError (1 for
 * any other rejection).
 *
 * Usage: node run-controller.mjs '<JSON: kubeconfig, provisionerName, identity, and ProvisionController timings>'
 */
import process from 'node:process';
import { LeaderElectionLostError, loadKubeConfig, ProvisionController } from '../../../dist/index.js';

const { kubeconfig, ...options } = JSON.parse(process.argv[2] ?? '{}');
const line = (fields) => process.stdout.write(`${JSON.stringify(fields)}\n`);
const log = (level) => (fields, msg) =>
  line({ level, msg, ...fields, ...(fields.err instanceof Error ? { err: fields.err.message } : {}) });
const logger = { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug'), child: () => logger };

const controller = new ProvisionController({
  kubeConfig: loadKubeConfig(kubeconfig, {}),
  leaderElectionNamespace: 'default',
  ...options,
  logger,
  provisioner: {
    provision: async () => {
      throw new Error('this program has no storage');
    },
    delete: async () => undefined,
  },
});
for (const event of ['startedLeading', 'stoppedLeading', 'started']) controller.on(event, () => line({ event }));
controller.on('newLeader', (identity) => line({ event: 'newLeader', identity }));

const stop = new globalThis.AbortController();
process.once('SIGTERM', () => stop.abort());
try {
  await controller.run(stop.signal);
  line({ event: 'runResolved' });
} catch (err) {
  line({ event: 'runRejected', name: err instanceof Error ? err.name : String(err) });
  process.exitCode = err instanceof LeaderElectionLostError ? 3 : 1;
}
