/**
 * Stops a control plane's processes when the process that started them dies without stopping them (a test
 * runner killing a worker, Ctrl-C on a crashed test, an uncaught exception): an etcd or kube-apiserver left behind
 * holds its ports and a core of CPU until the machine restarts. Linux would do this with `PR_SET_PDEATHSIG`, which
 * Node does not offer; a small `sh` keeps a pipe from us open instead, and when it reads end of file (we are gone)
 * it sends SIGTERM, then SIGKILL, to every process id it was given.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

const SCRIPT = [
  'pids=""',
  'while read -r p; do pids="$pids $p"; done',
  '[ -n "$pids" ] || exit 0',
  'kill -TERM $pids 2>/dev/null',
  'sleep 5',
  'kill -KILL $pids 2>/dev/null',
  'exit 0',
].join('\n');

/** Kills the watched processes if this process dies first; see the module comment. */
export class Guardian {
  private readonly child: ChildProcess | undefined;

  constructor() {
    try {
      this.child = spawn('sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
      this.child.on('error', () => undefined);
      this.child.stdin?.on('error', () => undefined);
      // Neither the guardian nor its pipe may keep this process alive.
      this.child.unref();
      (this.child.stdin as Socket | null)?.unref();
    } catch {
      this.child = undefined;
    }
  }

  /** Watches one more process. */
  watch(pid: number | undefined): void {
    if (pid !== undefined) this.child?.stdin?.write(`${pid}\n`);
  }

  /** A clean stop: the guardian goes without killing anything (the processes are stopped by their owner). */
  dismiss(): void {
    this.child?.kill('SIGKILL');
  }
}
