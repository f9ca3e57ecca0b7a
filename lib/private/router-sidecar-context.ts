import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Paths left out of the build context (also in the repository's .dockerignore). `dist` too when sources are present. */
export const ROUTER_SIDECAR_BUILD_EXCLUDES: readonly string[] = [
  'node_modules',
  'cdk.out',
  '.git',
  'coverage',
  'reports',
  '.prefix-router',
  'test',
  'docs',
  'examples',
  'lib',
  '*.tsbuildinfo',
  // Files the image does not use: left out so that editing them does not change the asset hash (a rebuild).
  '.ci',
  '.github',
  '.gitignore',
  '.dockerignore',
  'README.md',
  'cdk.json',
  'jest.config.js',
  'bin/app.ts',
  'router/bench',
  'router/traces',
  'router/scripts',
  // The router package's own build (npm run build -w cdk-prefix-aware-llm-router); the image compiles its own.
  'router/dist',
];

/** The folder the construct package carries the staged build context in (router/scripts/stage-sidecar-context.sh). */
export const STAGED_CONTEXT_DIR = 'sidecar';

/** A Docker build context for router/Dockerfile: a checkout's root or a staged context. */
function isBuildContext(dir: string): boolean {
  return existsSync(join(dir, 'router', 'Dockerfile')) && existsSync(join(dir, 'package.json'));
}

/**
 * The default build context of the router sidecar image, searched upwards from `from`: in the installed construct
 * package (dist/private/ here) the staged context it carries, `<package>/sidecar`; in a repository checkout (lib/ or
 * lib/dist/ here) the repository root, whose Dockerfile compiles router/src in the build stage.
 */
export function findSidecarBuildContext(from: string = __dirname): string | undefined {
  let dir = from;
  for (;;) {
    const staged = join(dir, STAGED_CONTEXT_DIR);
    if (isBuildContext(staged)) return staged;
    if (isBuildContext(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
