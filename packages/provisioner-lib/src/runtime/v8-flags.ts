/**
 * V8's settings for a provisioner process, set when `@kprov/provisioner-lib/runtime` is loaded: what the images'
 * launcher (`kprov-node`) gives Node.js on its command line, for a binary started with plain `node`.
 */
import { accessSync, constants } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

/**
 * The V8 flags set by default when the runtime is loaded (`KPROV_V8_FLAGS` replaces them; see {@link setV8Flags}):
 * - `--optimize-for-size`: after a full collection V8 gives back the heap pages it no longer needs and grows the heap
 *   in small steps; without it a controller's caches taking a stream of updates (a burst of provisions and the
 *   bindings after it) kept the pages of every peak.
 * - `--no-turbofan`: JavaScript optimized up to V8's Maglev compiler but not TurboFan, whose code (pages of the
 *   Node.js executable) and compilations took about 6 MiB of RSS once anything ran hot, for no lower CPU per
 *   provision.
 */
export const DEFAULT_V8_FLAGS: readonly string[] = ['--optimize-for-size', '--no-turbofan'];

/** Node.js options that decide what a flag of ours would: given to Node.js, they win and ours is not set. */
const DECIDED_BY: Readonly<Record<string, readonly string[]>> = {
  // The young generation's size, set on the command line, is what the user chose over V8's small-device sizing.
  'optimize-for-size': ['max-semi-space-size', 'min-semi-space-size', 'semi-space-growth-factor'],
  turbofan: ['max-opt', 'maglev', 'jitless'],
  // A binary's lower tiers off (addV8Flags): an optimization tier chosen on the command line decides them too.
  maglev: ['max-opt', 'jitless'],
  sparkplug: ['max-opt', 'jitless'],
  // No compiler at all (restartWithV8Flags): an optimization tier chosen on the command line keeps them. The
  // launcher's `--no-turbofan` does not decide it.
  jitless: ['max-opt'],
};

/** A V8 or Node.js flag's name: no dashes before it, no `no-`, `-` for `_`, no value (`--max_opt=2` → `max-opt`). */
function flagName(flag: string): string {
  return flag.replace(/^-+/, '').replace(/=.*$/s, '').replaceAll('_', '-').replace(/^no-/, '');
}

/**
 * The flags of `flags` to set in a process started with `nodeArgs` (its `process.execArgv` and the words of
 * `NODE_OPTIONS`): those that neither name (`--turbofan` for `--no-turbofan`) nor a flag deciding the same
 * ({@link DECIDED_BY}) gave Node.js already.
 */
export function v8FlagsToSet(flags: readonly string[], nodeArgs: readonly string[]): string[] {
  const given = new Set(nodeArgs.filter((a) => a.startsWith('-')).map(flagName));
  return flags.filter((flag) => {
    const name = flagName(flag);
    return !given.has(name) && !(DECIDED_BY[name] ?? []).some((other) => given.has(other));
  });
}

/** The environment variable whose words replace {@link DEFAULT_V8_FLAGS}; empty for none. */
export const V8_FLAGS_ENV = 'KPROV_V8_FLAGS';

/**
 * Sets the V8 flags of `KPROV_V8_FLAGS` (its words; {@link DEFAULT_V8_FLAGS} when it is not set, none when it is
 * empty) that this process was not started with ({@link v8FlagsToSet}), and returns them. V8 reads these where it
 * decides (its heap's growth, what it optimizes next), so they take effect from then on: the runtime sets them as
 * it is loaded, before the modules it loads make any code hot.
 */
export function setV8Flags(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const words = env[V8_FLAGS_ENV];
  return setUndecided(words === undefined ? DEFAULT_V8_FLAGS : words.split(/\s+/).filter((w) => w !== ''), env);
}

/**
 * Sets V8 flags of a binary's own beside {@link DEFAULT_V8_FLAGS}, as those were set: the flags of `flags` that
 * this process was not started with ({@link v8FlagsToSet}), and none when `KPROV_V8_FLAGS` is set (its words are
 * all the flags then, the binary's too). Call it first thing in the binary's entry, before its own code runs hot.
 * Returns the flags it set.
 *
 * For example local-static's provisioner, a discovery pass every few seconds on each node, turns V8's compilers off
 * (`['--no-sparkplug', '--no-maglev']`): its JavaScript runs in V8's interpreter, and the compilers' code and
 * memory, about 2 MiB of its RSS at rest, are never taken.
 *
 * @param flags - V8 flags, e.g. `['--no-maglev']`.
 * @param env - the environment to read `KPROV_V8_FLAGS` and `NODE_OPTIONS` from. Default `process.env`.
 */
export function addV8Flags(
  flags: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): string[] {
  return env[V8_FLAGS_ENV] === undefined ? setUndecided(flags, env) : [];
}

/**
 * Starts this process again in its place with V8 flags that take effect only when Node.js is given them at start,
 * such as `--jitless`, which {@link addV8Flags} cannot set from inside. `process.execve` replaces the program and
 * keeps the process: its ID, its standard input, output and error, its environment; the new one gets Node.js's
 * options of this one (`process.execArgv`) followed by the flags of `flags` not given already
 * ({@link v8FlagsToSet}), then the script and its arguments, and so it runs this code again and goes on past it.
 *
 * Does nothing and returns when there is nothing to add, when `KPROV_V8_FLAGS` is set (its words are all the flags
 * then, the binary's too), when this Node.js cannot replace its program (no `process.execve`, as on Windows; its
 * executable gone or not executable), when it runs no script file (`node -e`), or for `--jitless`, when its entry
 * is TypeScript (Node.js strips the types with WebAssembly, which `--jitless` leaves out); the binary then goes on
 * as it was started. Call it first thing in the binary's entry script: what ran before it runs twice, and anything it
 * opened (files, sockets, timers) is dropped unclosed.
 *
 * For example local-static's provisioner starts again with `--jitless` (no executable memory at all: its
 * JavaScript and regular expressions interpreted), about 2 MiB less at rest than with only its compilers off. Without
 * a JIT, V8 has no WebAssembly: a binary that restarts with `--jitless` cannot reach its API server through a proxy
 * (undici, which a kubeconfig's `proxy-url` uses, parses HTTP with WebAssembly), and says so when it tries.
 *
 * @param flags - V8 flags for Node.js's command line, e.g. `['--jitless']`.
 * @param env - the environment: `KPROV_V8_FLAGS` and `NODE_OPTIONS` are read from it, and the new program gets it.
 *   Default `process.env`.
 */
export function restartWithV8Flags(
  flags: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const script = process.argv[1];
  if (env[V8_FLAGS_ENV] !== undefined || typeof process.execve !== 'function' || script === undefined) return;
  const add = v8FlagsToSet(flags, nodeArgsOf(env));
  if (add.length === 0 || (add.includes('--jitless') && TYPESCRIPT.test(script)) || !executable(process.execPath)) {
    return;
  }
  const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  process.execve(
    process.execPath,
    [process.execPath, ...process.execArgv, ...add, script, ...process.argv.slice(2)],
    vars,
  );
}

/** The flag {@link restartWithoutJit} starts again with: no JIT at all, so no executable memory. */
const NO_JIT = ['--jitless'];
/** V8's compilers, turned off from inside where the process did not start again without its JIT. */
const NO_COMPILERS = ['--no-sparkplug', '--no-maglev'];

/**
 * Runs this binary without V8's JIT: {@link restartWithV8Flags} with `--jitless`, then, where the process did not
 * start again (a TypeScript entry, no `process.execve`), V8's Sparkplug and Maglev compilers turned off from inside
 * ({@link addV8Flags}), so that its JavaScript runs in V8's interpreter either way. For a binary whose work is not
 * hot enough to pay for the compilers, such as a provisioner on every node: local-static's provisioner and local-path
 * in node mode run so (local-static's at rest through the images' launcher: 56.4 MiB, against 58.5-58.8 with only
 * the compilers off and 60.2-60.3 with them on). Nothing happens when `KPROV_V8_FLAGS` is set (its words are all the
 * flags then). Call it first thing in the binary's entry script, with the caveats of {@link restartWithV8Flags} (no
 * WebAssembly, so no `proxy-url`).
 *
 * @param env - the environment, as for {@link restartWithV8Flags}. Default `process.env`.
 * @returns the flags set from inside: none when the process runs with `--jitless`.
 */
export function restartWithoutJit(env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  restartWithV8Flags(NO_JIT, env);
  return addV8Flags(NO_COMPILERS, env);
}

/** A TypeScript entry, which Node.js strips of its types with WebAssembly: it cannot run with `--jitless`. */
const TYPESCRIPT = /\.[cm]?ts$/;

/**
 * Whether this process may execute `file`: Node.js ends the process when `process.execve` fails, so that is checked
 * first (a Node.js executable removed by an upgrade, a mount without exec).
 */
function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Node.js's options of this process: its command line's (`process.execArgv`) and the words of `NODE_OPTIONS`. */
function nodeArgsOf(env: Readonly<Record<string, string | undefined>>): string[] {
  return [...process.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
}

/** Sets the flags of `flags` that neither Node.js's command line nor `NODE_OPTIONS` decided; returns them. */
function setUndecided(flags: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  const set = v8FlagsToSet(flags, nodeArgsOf(env));
  for (const flag of set) setFlagsFromString(flag);
  return set;
}

/** The flags set when the runtime was loaded. */
export const V8_FLAGS_SET: readonly string[] = setV8Flags();
