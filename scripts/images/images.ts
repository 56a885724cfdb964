// `pnpm images`: the provisioners' container images, built with buildah (no daemon) into OCI archives under images/,
// each named as the manifests and charts reference it; then each image's size and start-up time to ready.
// `node scripts/images/images.ts --help` says more.
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import process from 'node:process';
import { chooseBase } from './base.ts';
import { buildPackageImage, imageSize, writeArchive } from './build.ts';
import { ImagesError } from './errors.ts';
import { NotMeasurable } from './manifest.ts';
import { parseOptions, usage } from './options.ts';
import { OUT_DIR, REPO } from './paths.ts';
import { measureStartup, type Startup } from './startup.ts';
import { TARGETS } from './targets.ts';
import { precise, seconds, stopwatch } from './time.ts';
import { requireTool } from './tools.ts';

interface Built {
  ref: string;
  archive: string;
  size: string;
  archiveBytes: number;
  startup: Startup | string | undefined;
}

async function main(): Promise<void> {
  const total = stopwatch();
  const names = TARGETS.map((t) => t.name);
  const options = parseOptions(process.argv.slice(2), process.env, names);
  if (options.help) {
    console.log(usage(names));
    return;
  }
  requireTool('buildah', 'it builds the images');
  const targets = options.only.length === 0 ? TARGETS : TARGETS.filter((t) => options.only.includes(t.name));
  // The build logs go beside the archives.
  await mkdir(OUT_DIR, { recursive: true });

  let step = stopwatch();
  // Only the provisioners' images are built on the Node.js base.
  const base = targets.some((t) => t.kind === 'package') ? await chooseBase(options.base, OUT_DIR) : undefined;
  if (base !== undefined) console.log(`images: base ${base.ref}: ${base.how} (${seconds(step())})`);

  const built: Built[] = [];
  for (const target of targets) {
    step = stopwatch();
    const archive = join(OUT_DIR, `${target.name}.oci.tar`);
    let buildTime: number;
    let archiveBytes: number;
    let size: string;
    if (target.kind === 'package') {
      await buildPackageImage(target, base!.ref, join(OUT_DIR, `${target.name}.build.log`));
      buildTime = step();
      step = stopwatch();
      archiveBytes = await writeArchive(target.ref, archive);
      size = await imageSize(target.ref);
    } else {
      const built = await target.archive().catch((err: unknown) => {
        throw new ImagesError(err instanceof Error ? err.message : String(err));
      });
      buildTime = step();
      step = stopwatch();
      await copyFile(built, archive);
      archiveBytes = (await stat(archive)).size;
      size = `${(archiveBytes / 1e6).toFixed(1)} MB`;
    }
    console.log(
      `images: ${target.ref}: built in ${seconds(buildTime)}, ${relative(REPO, archive)} written in ${seconds(step())}`,
    );
    built.push({ ref: target.ref, archive, size, archiveBytes, startup: undefined });
  }

  for (const [i, target] of targets.entries()) {
    const entry = built[i];
    if (target.kind !== 'package' || entry === undefined) continue;
    step = stopwatch();
    try {
      entry.startup = await measureStartup(target, join(OUT_DIR, `${target.name}.startup.log`));
    } catch (err) {
      if (!(err instanceof NotMeasurable)) throw err;
      entry.startup = err.message;
    }
    console.log(`images: ${target.ref}: start-up measured in ${seconds(step())}`);
  }

  console.log('');
  for (const entry of built) console.log(report(entry));
  console.log(`\nimages: done in ${seconds(total())}`);
}

function report({ ref, archive, size, archiveBytes, startup }: Built): string {
  const lines = [`${ref}  ${size} (${relative(REPO, archive)}: ${(archiveBytes / 1e6).toFixed(1)} MB)`];
  if (typeof startup === 'string') lines.push(`  start-up not measured: ${startup}`);
  else if (startup !== undefined) {
    const { launch, port, runs, overhead } = startup;
    lines.push(
      `  start-up to ready: ${precise(median(runs))} (median of ${runs.map((ms) => precise(ms)).join(', ')}; ` +
        `buildah run's own start: ${precise(median(overhead))}): ${launch.manifest} until its ${launch.probe.kind} ` +
        `GET ${launch.probe.path} answered 200 ` +
        `(port ${launch.probe.port} moved to ${port}: the host's network is shared)`,
    );
  }
  return lines.join('\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

try {
  await main();
} catch (err) {
  if (!(err instanceof ImagesError)) throw err;
  console.error(`images: ${err.message}`);
  process.exitCode = 1;
}
