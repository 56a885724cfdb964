// Running the tools: buildah, debootstrap, npm, tar.
import { spawn, type SpawnOptions } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { ImagesError } from './errors.ts';

export interface ExecOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Killed after this long (then the promise rejects). Default: none. */
  timeoutMs?: number;
}

/** How many of a failed command's last lines are shown. */
const TAIL_LINES = 25;

/** Runs a command and returns what it printed on stdout; rejects with its stderr's last lines when it fails. */
export async function capture(command: string, args: string[], options: ExecOptions = {}): Promise<string> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const code = await exec(command, args, options, (child) => {
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
  });
  if (code !== 0) {
    throw new ImagesError(`${describe(command, args)} failed (${code}):\n${tail(Buffer.concat(err).toString())}`);
  }
  return Buffer.concat(out).toString();
}

/**
 * Runs a command with its stdout and stderr written to the file `log` (buildah's build output is long); rejects with
 * the log's last lines, the tool's own account of what failed, when it fails.
 */
export async function logged(command: string, args: string[], log: string, options: ExecOptions = {}): Promise<void> {
  const file = createWriteStream(log, { flags: 'a' });
  file.write(`$ ${describe(command, args)}\n`);
  const code = await exec(command, args, options, (child) => {
    child.stdout?.pipe(file, { end: false });
    child.stderr?.pipe(file, { end: false });
  });
  await new Promise<void>((resolve) => file.end(resolve));
  if (code !== 0) {
    const text = await readFile(log, 'utf8');
    const failed = `${describe(command, args)} failed (${code})`;
    throw new ImagesError(`${failed}; its last lines (all of it in ${log}):\n${tail(text)}`);
  }
}

/** Runs the command to its end: its exit code, or a description of the signal or timeout that ended it. */
async function exec(
  command: string,
  args: string[],
  options: ExecOptions,
  attach: (child: ReturnType<typeof spawn>) => void,
): Promise<number | string> {
  const spawnOptions: SpawnOptions = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  };
  const child = spawn(command, args, spawnOptions);
  attach(child);
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
  try {
    return await new Promise<number | string>((resolve, reject) => {
      child.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'ENOENT' ? new ImagesError(`${command} not found on the PATH`) : err),
      );
      child.once('close', (code, signal) => {
        if (timedOut) resolve(`timed out after ${((options.timeoutMs ?? 0) / 1000).toFixed(0)} s`);
        else resolve(code ?? `signal ${signal}`);
      });
    });
  } finally {
    clearTimeout(timer);
  }
}

function describe(command: string, args: string[]): string {
  return [command, ...args].join(' ');
}

function tail(text: string): string {
  const lines = text.trimEnd().split('\n');
  return lines
    .slice(-TAIL_LINES)
    .map((l) => `  ${l}`)
    .join('\n');
}
