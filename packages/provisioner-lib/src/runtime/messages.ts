/** The lines the runtime logs at the turns of a run, which a binary may word as its upstream does. */
import type { Logger } from '../logging/logger.js';
import { describeError } from '../client/api-errors.js';
import type { LeaderElectionLostError } from '../controller/controller.js';

/** The log lines of a run. Each is a function of the logger, so that a binary chooses the level, message and fields. */
export interface RuntimeMessages {
  /** The first SIGINT or SIGTERM arrived. Default: info `Received signal, shutting down` with `{ signal }`. */
  signal: (logger: Logger, signal: NodeJS.Signals) => void;
  /** The controller stopped after a requested stop. Default: info `Stopped`. */
  stopped: (logger: Logger) => void;
  /** The Lease was lost (exit code 1). Default: error `Leader election lost, exiting` with `{ err }`. */
  leadershipLost: (logger: Logger, err: LeaderElectionLostError) => void;
  /** Start-up or the run failed (exit code 1). Default: error `Provisioner failed` with `{ err }` (the message). */
  failed: (logger: Logger, err: unknown) => void;
  /** The metrics and health endpoint listens. Default: info `Serving metrics and health checks` with `{ url }`. */
  serving: (logger: Logger, url: string) => void;
}

/** The runtime's default log lines (see {@link RuntimeMessages}). */
export const DEFAULT_MESSAGES: RuntimeMessages = {
  signal: (logger, signal) => logger.info({ signal }, 'Received signal, shutting down'),
  stopped: (logger) => logger.info({}, 'Stopped'),
  leadershipLost: (logger, err) => logger.error({ err: err.message }, 'Leader election lost, exiting'),
  failed: (logger, err) => logger.error({ err: describeError(err) }, 'Provisioner failed'),
  serving: (logger, url) => logger.info({ url }, 'Serving metrics and health checks'),
};
