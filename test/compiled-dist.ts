/**
 * The compiled project (dist/), made current on first use, for suites that test a process boundary: they run
 * `node dist/…` (about half a second of CPU per process) instead of ts-node (about 7 s of CPU per process, most of it
 * compiling the same files again). `npm test` has just run tsc, so there dist/ is found current and nothing runs; a
 * lone `npx jest FILE` after an edit runs the incremental tsc once (type errors are printed, not fatal: the type gate
 * is `npm test`'s own tsc step). Jest workers share one build: the first takes a lock, the others wait for it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const ROOT = join(__dirname, '..');
const COMPILED_CLI = join(ROOT, 'dist', 'bin', 'prefix-router.js');

/** Touched after each build here, so a build that left dist/.tsbuildinfo untouched (nothing changed) still counts. */
const STAMP = join(ROOT, 'dist', '.test-build-stamp');
const BUILD_INFO = join(ROOT, 'dist', '.tsbuildinfo');
const LOCK = join(ROOT, 'dist', '.test-build-lock');
/** tsconfig.json's `include` roots; the build outputs inside them (its `exclude`) are skipped. */
const SOURCE_ROOTS = ['lib', 'router/src', 'router/bench', 'bin', 'examples', 'test'];
const SKIPPED = new Set(['node_modules', 'dist', 'cdk.out', 'sidecar']);

/**
 * True when a .ts source under `dir` is newer than its own compiled .js (or has none) and than this helper's last build
 * (`stampMs`), or a .json source is newer than `builtMs`. Each .ts is held against its output, not against
 * dist/.tsbuildinfo: `tsc --noEmit` (the type check used while editing) rewrites the build info without emitting, which
 * would make an edited source look built. The stamp covers a source touched without a change (a checkout): tsc then
 * emits nothing for it, and without the stamp every suite would run tsc again.
 */
function hasStaleSource(dir: string, builtMs: number, stampMs: number): boolean {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (hasStaleSource(path, builtMs, stampMs)) return true;
    } else if (entry.name.endsWith('.ts')) {
      const output = join(ROOT, 'dist', relative(ROOT, path).replace(/\.ts$/, '.js'));
      const source = statSync(path).mtimeMs;
      if (source > stampMs && (!existsSync(output) || source > statSync(output).mtimeMs)) return true;
    } else if (entry.name.endsWith('.json') && statSync(path).mtimeMs > builtMs) {
      return true;
    }
  }
  return false;
}

/** True when dist/ is missing or some source (or tsconfig.json) changed after the last build. */
export function distIsStale(): boolean {
  const [stamp, buildInfo] = [STAMP, BUILD_INFO].map((f) => (existsSync(f) ? statSync(f).mtimeMs : 0));
  const built = Math.max(stamp, buildInfo);
  if (built === 0 || !existsSync(COMPILED_CLI)) return true;
  if (statSync(join(ROOT, 'tsconfig.json')).mtimeMs > built) return true;
  return SOURCE_ROOTS.some((r) => hasStaleSource(join(ROOT, r), built, stamp));
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the build lock, waiting while a live process holds it (a dead holder's lock is taken over). */
function withBuildLock(build: () => void): void {
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      const holder = Number(existsSync(join(LOCK, 'pid')) ? readFileSync(join(LOCK, 'pid'), 'utf8') : NaN);
      if (Number.isInteger(holder) && !processAlive(holder)) rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${LOCK} held for 10 minutes by process ${holder}`);
      else sleepMs(200);
    }
  }
  try {
    writeFileSync(join(LOCK, 'pid'), String(process.pid));
    build();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

let checked = false;

/** Builds dist/ with the incremental `tsc -p tsconfig.json` when it is stale (checked once per suite); returns dist/'s path. */
export function compiledDist(): string {
  if (checked || !distIsStale()) {
    checked = true;
    return join(ROOT, 'dist');
  }
  withBuildLock(() => {
    if (!distIsStale()) return; // another jest worker built it while this one waited
    const started = new Date();
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 600_000,
      },
    );
    if (tsc.error) throw tsc.error;
    if (!existsSync(COMPILED_CLI))
      throw new Error(`tsc -p tsconfig.json built no ${COMPILED_CLI}:\n${tsc.stdout}${tsc.stderr}`);
    if (tsc.status !== 0)
      process.stderr.write(
        `tsc -p tsconfig.json reported errors (dist/ emitted all the same):\n${tsc.stdout.slice(0, 4000)}\n`,
      );
    // Dated when the build started: a source saved during the build is newer, so the next use builds again.
    writeFileSync(STAMP, '');
    utimesSync(STAMP, started, started);
  });
  checked = true;
  return join(ROOT, 'dist');
}

/**
 * A module of the compiled project, current, by its source path from the repository root (`router/src/cli/demo-command`):
 * for suites whose code starts worker threads or child processes from its own file (the simulator's workers, the
 * demo's services, prompt workers). Loaded from the sources, each of those threads and processes compiles every
 * module again under ts-node (seconds of CPU apiece); loaded from dist/, they run the JavaScript tsc built from the
 * same sources. Type it with the source module: `compiledModule<typeof DemoCommand>('router/src/cli/demo-command')`
 * after `import type * as DemoCommand from '…/demo-command'`.
 */
export function compiledModule<Module>(sourcePath: string): Module {
  return require(join(compiledDist(), `${sourcePath}.js`)) as Module;
}

/** dist/bin/prefix-router.js, current: the CLI of the checkout, to run with `process.execPath`. */
export function compiledCli(): string {
  compiledDist();
  return COMPILED_CLI;
}
