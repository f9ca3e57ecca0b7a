import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { STAGED_CONTEXT_DIR } from './router-sidecar-context';

/**
 * The router sidecar's settings checked at synth by the router's own start-up validation, not by a copy of its
 * rules: `checkContainerEnvironment` of router/src/container/container-config.ts, the function `prefix-router
 * container` runs before it starts any engine. lib/ does not import router/ (a separate package, whose runtime
 * dependencies a CDK app never installs); it loads that one module, which is pure and needs no package, from the
 * compiled router the construct package already carries for the image (`sidecar/dist/router/src`, staged by
 * router/scripts/stage-sidecar-context.sh): synth checks with exactly the code the container will run. In a
 * repository checkout it loads the router's sources next to lib/ (TypeScript under ts-node or jest, JavaScript
 * in the root build's dist/).
 */

/** What the router's check returns (router/src/container/container-config.ts `ContainerEnvironmentCheck`). */
export interface ContainerEnvironmentCheck {
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
  readonly unknownVariables: readonly string[];
}

/** The part of the router's container-config module the construct uses; test/lib/router-settings.test.ts holds it to the module. */
export interface RouterSettingsModule {
  checkContainerEnvironment(env: Readonly<Record<string, string>>): ContainerEnvironmentCheck;
  readonly CONTAINER_VARIABLES: readonly string[];
}

const MODULE_PATH = ['router', 'src', 'container', 'container-config'];

/** Where the module may be, relative to this file's folder (dist/private/ installed, lib/private/ or dist/lib/private/ in a checkout). */
export function routerSettingsCandidates(from: string = __dirname): string[] {
  const packageRoot = join(from, '..', '..');
  return [
    join(packageRoot, STAGED_CONTEXT_DIR, 'dist', ...MODULE_PATH) + '.js',
    join(packageRoot, ...MODULE_PATH) + '.js',
    join(packageRoot, ...MODULE_PATH) + '.ts',
  ];
}

const loaded = new Map<string, RouterSettingsModule | undefined>();

/** The router's settings module, or undefined when this installation carries none (then synth warns). */
export function loadRouterSettings(from: string = __dirname): RouterSettingsModule | undefined {
  if (loaded.has(from)) return loaded.get(from);
  const file = routerSettingsCandidates(from).find((candidate) => existsSync(candidate));
  // A computed path: the module is found at synth, not bundled into lib's compilation.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = file === undefined ? undefined : (require(file) as RouterSettingsModule);
  loaded.set(from, module);
  return module;
}
