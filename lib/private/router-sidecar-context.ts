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
];

/** The directory above `from` that holds router/Dockerfile (lib/ in a checkout, dist/lib/ in the package). */
export function findPackageRoot(from: string = __dirname): string | undefined {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'router', 'Dockerfile')) && existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

