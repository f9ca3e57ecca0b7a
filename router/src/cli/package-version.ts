import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The router package's name, as its package.json spells it; a package.json of another name is not ours. */
export const ROUTER_PACKAGE_NAME = 'cdk-prefix-aware-llm-router';

/**
 * Where the router package's package.json lies relative to this module, in each layout it runs from:
 * the sources (router/src/cli), a checkout's build (dist/router/src/cli; the checkout root's package.json is the
 * private workspace, so the router's is under router/), and the installed package (router/dist/router/src/cli,
 * its package.json beside dist/). The same layouts shipped-traces.ts finds the traces in.
 */
function candidatePackageFiles(fromDir: string): string[] {
  return [
    resolve(fromDir, '../../package.json'),
    resolve(fromDir, '../../../../router/package.json'),
    resolve(fromDir, '../../../../package.json'),
  ];
}

/**
 * The router package's version (`prefix-router --version`), read from its package.json rather than compiled in,
 * so a build never reports a stale number. Undefined where no router package.json is found (a container image
 * built from a checkout copies only the workspace root's).
 */
export function routerPackageVersion(fromDir: string = __dirname): string | undefined {
  for (const file of candidatePackageFiles(fromDir)) {
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    if (manifest.name === ROUTER_PACKAGE_NAME && typeof manifest.version === 'string') return manifest.version;
  }
  return undefined;
}

/** What `--version` prints: the version, or why there is none (never a made-up number). */
export function versionText(fromDir: string = __dirname): string {
  const version = routerPackageVersion(fromDir);
  return version ?? `unknown (no ${ROUTER_PACKAGE_NAME} package.json found from ${fromDir})`;
}
