import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { STAGED_CONTEXT_DIR } from './router-sidecar-context';

/**
 * Router modules the construct runs at synth. The router sidecar's settings checked at synth by the router's own start-up validation, not by a copy of its
 * rules: `checkContainerEnvironment` of router/src/container/container-config.ts, the function `prefix-router
 * container` runs before it starts any engine. lib/ does not import router/ (a separate package, whose runtime
 * dependencies a CDK app never installs); it loads that one module, which is pure and needs no package, from the
 * compiled router the construct package already carries for the image (`sidecar/dist/router/src`, staged by
 * router/scripts/stage-sidecar-context.sh): synth checks with exactly the code the container will run. In a
 * repository checkout it loads the router's sources next to lib/ (TypeScript under ts-node or jest, JavaScript
 * in the root build's dist/). The endpoint's hourly price comes from the router's price table the same way
 * (router/src/common/instance-prices.ts), so `prefix-router plan`, `ab` and synth quote one price.
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

/** The router's instance price table (router/src/common/instance-prices.ts). */
export interface InstancePricesModule {
  readonly LIST_PRICE_USD_PER_HOUR: Readonly<Record<string, number>>;
  readonly LIST_PRICE_SOURCE: string;
  readonly LIST_PRICE_RECORDED: string;
  readonly HOURS_PER_MONTH: number;
}

/** The router's engine arguments (router/src/emulator/engine-args.ts): names, ranges and vLLM's relations. */
export interface EngineArgsModule {
  readonly ENGINE_ARGS: readonly { readonly flag: string }[];
  engineArgValueProblem(spec: { readonly flag: string }, value: unknown): string | undefined;
  schedulerRelationProblems(
    where: string,
    settings: { maxNumBatchedTokens: number; maxNumSeqs: number; longPrefillTokenThreshold?: number },
    maxModelLen?: number,
  ): string[];
}

const CONTAINER_CONFIG = ['router', 'src', 'container', 'container-config'];
const ENGINE_ARGS = ['router', 'src', 'emulator', 'engine-args'];
const INSTANCE_PRICES = ['router', 'src', 'common', 'instance-prices'];

/**
 * Where a router module may be, relative to this file's folder (dist/private/ installed; lib/private/ or
 * dist/lib/private/ in a checkout), first found wins.
 */
export function routerModuleCandidates(modulePath: readonly string[], from: string = __dirname): string[] {
  const packageRoot = join(from, '..', '..');
  return [
    join(packageRoot, STAGED_CONTEXT_DIR, 'dist', ...modulePath) + '.js',
    join(packageRoot, ...modulePath) + '.js',
    join(packageRoot, ...modulePath) + '.ts',
  ];
}

/** The candidates of the settings module. */
export function routerSettingsCandidates(from: string = __dirname): string[] {
  return routerModuleCandidates(CONTAINER_CONFIG, from);
}

const loaded = new Map<string, unknown>();

export function loadRouterModule<T>(modulePath: readonly string[], from: string): T | undefined {
  const key = `${from}\0${modulePath.join('/')}`;
  if (loaded.has(key)) return loaded.get(key) as T | undefined;
  const file = routerModuleCandidates(modulePath, from).find((candidate) => existsSync(candidate));
  // A computed path: the module is found at synth, not compiled into lib.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = file === undefined ? undefined : (require(file) as T);
  loaded.set(key, module);
  return module;
}

/** The router's settings module, or undefined when this installation carries none (then synth warns). */
export function loadRouterSettings(from: string = __dirname): RouterSettingsModule | undefined {
  return loadRouterModule<RouterSettingsModule>(CONTAINER_CONFIG, from);
}

/** The router's price table, or undefined when this installation carries none (then synth states no price). */
export function loadInstancePrices(from: string = __dirname): InstancePricesModule | undefined {
  return loadRouterModule<InstancePricesModule>(INSTANCE_PRICES, from);
}

/** The router's engine-arguments module, or undefined when this installation carries none (then synth skips those checks). */
export function loadEngineArgs(from: string = __dirname): EngineArgsModule | undefined {
  return loadRouterModule<EngineArgsModule>(ENGINE_ARGS, from);
}
