import { parseDecimalNumber } from '../common/decimal-text';
import type { Rng } from '../common/seeded-rng';
import type { StateHashKey } from '../state/state-hash-key';
import { DEFAULT_KV_CACHE_TOKENS } from '../state/prefix-index';
import type { EngineStateNeed, RoutingPolicy } from './routing-policy';
import type { StageSummary } from './stages/stage';

/** An option's value: a number for 'integer' and 'number' options, the text for 'string' ones. */
export type PolicyOptionValue = number | string;

/** A numeric option: an integer or a number in [min, max]. */
export interface NumericOptionSchema {
  /** camelCase; the flag is its kebab-case (`--prefix-length`), the variable PREFIX_ROUTER_<SNAKE_CASE>. */
  readonly name: string;
  readonly type: 'integer' | 'number';
  readonly min: number;
  readonly max: number;
  readonly default: number;
  /** One line: what it does and, for the default, why. */
  readonly doc: string;
  /** Placeholder in help texts, e.g. 'n', 'tokens'. */
  readonly valueName?: string;
}

/** A string option: a text matching a pattern. */
export interface StringOptionSchema {
  readonly name: string;
  readonly type: 'string';
  /** A regular expression the whole value must match, and how to say it in an error message. */
  readonly pattern: RegExp;
  readonly patternDoc: string;
  readonly default: string;
  readonly doc: string;
  readonly valueName?: string;
}

/** One option of a policy's schema: its name, type, allowed values, default and one line of docs. */
export type PolicyOptionSchema = NumericOptionSchema | StringOptionSchema;

/** What a policy may depend on: only injected, deterministic things. */
export interface PolicyDeps {
  readonly rng: Rng;
  /** The secret routing block hashes are keyed with (`--state-hash-key-file`); unset: one random key per process. */
  readonly stateHashKey?: StateHashKey;
}

/**
 * The values `create` receives for a schema: one property per option, named as in the schema, a number for a
 * numeric option and a string for a string one. So a misspelt option, or a string used as a number, does not
 * compile.
 */
export type PolicyOptionValues<Options extends readonly PolicyOptionSchema[]> = {
  readonly [Option in Options[number] as Option['name']]: Option extends StringOptionSchema ? string : number;
};

/**
 * What a policy file exports: one `PolicyDefinition`. Everything else about a policy — validation, `serve`
 * flags and PREFIX_ROUTER_* variables, `name?option=value` spec strings, help texts, the docs' tables and the
 * cross-policy tests — is derived from these definitions (see policy-registry.ts), so adding a policy is one
 * new file plus one line in the registry.
 */
export interface PolicyDefinition<
  Name extends string = string,
  Reason extends string = string,
  Options extends readonly PolicyOptionSchema[] = readonly PolicyOptionSchema[],
> {
  readonly name: Name;
  /** One line for help texts and the docs' policy table. */
  readonly description: string;
  /** The closed set of decision reasons this policy reports. */
  readonly reasons: readonly Reason[];
  /**
   * The stages the policy is built from, in the order they run (stages/stage.ts): what the docs' policy table
   * shows; the registry's tests check that the policy `create` builds runs exactly these.
   */
  readonly stages: readonly StageSummary[];
  readonly options: Options;
  /**
   * What of the engines' own state the policy reads (RoutingPolicy.engineState, which the policy `create` builds
   * declares the same: the registry's tests check it); absent: none. Lets validation refuse the policy where no
   * caller fills it (serve) without building it.
   */
  readonly engineState?: EngineStateNeed;
  /**
   * The policy predicts an instance's hit from its engine's own account (InstanceView.engineCache) when the caller
   * follows the engines' KV events, and from its own index otherwise; absent: it never reads that account.
   */
  readonly readsEngineCache?: boolean;
  /** Builds the policy; `options` holds every option of the schema, defaults filled in, already validated. */
  create(options: PolicyOptionValues<Options>, deps: PolicyDeps): RoutingPolicy;
}

/** Whether following the engines' KV events changes what the policy decides (serve --kv-events, the container's). */
export function followsEngineKvEvents(definition: PolicyDefinition | undefined): boolean {
  return definition?.readsEngineCache === true || definition?.engineState === 'cached-blocks';
}

/** Identity with `const` inference, so the registry can derive the name and reason unions and `create` sees typed options. */
export function definePolicy<
  const Name extends string,
  const Reason extends string,
  const Options extends readonly PolicyOptionSchema[],
>(definition: PolicyDefinition<Name, Reason, Options>): PolicyDefinition<Name, Reason, Options> {
  return definition;
}

/** The rule an option's value must satisfy, in words (for errors, help and docs). */
export function optionRule(option: PolicyOptionSchema): string {
  if (option.type === 'string') return `must be ${option.patternDoc}`;
  return `must be ${option.type === 'integer' ? 'an integer' : 'a number'} between ${option.min} and ${option.max}`;
}

/** The allowed range in short form for tables: `1024–65536`, or the pattern's description. */
export function optionRange(option: PolicyOptionSchema): string {
  if (option.type === 'string') return option.patternDoc;
  return `${option.min}–${option.max}`;
}

/** True when `value` is allowed for `option`: its type, and its range or pattern. */
export function optionValueValid(option: PolicyOptionSchema, value: unknown): boolean {
  if (option.type === 'string') return typeof value === 'string' && option.pattern.test(value);
  if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  if (option.type === 'integer' && !Number.isInteger(value)) return false;
  return value >= option.min && value <= option.max;
}

/** A value from text (a spec string, a flag, a variable): numbers for numeric options; the text when it is not one. */
export function optionValueFromText(option: PolicyOptionSchema, text: string): unknown {
  const t = text.trim();
  if (option.type === 'string') return t;
  if (t === '') return t;
  return parseDecimalNumber(t) ?? t;
}

/** 'prefixLength' → 'prefix-length'. */
export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** 'prefixLength' → 'PREFIX_LENGTH'. */
export function screamingSnakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

/** The `kvCacheTokens` option of every policy that sizes a per-instance index by KV capacity (one spec, one range). */
export const KV_CACHE_TOKENS_OPTION = {
  name: 'kvCacheTokens',
  type: 'integer',
  min: 1024,
  max: 1_000_000_000,
  default: DEFAULT_KV_CACHE_TOKENS,
  valueName: 'tokens',
  doc: "KV capacity per instance when the engine's vllm:cache_config_info is not available; sizes each instance's index (about one TP8 H100 node serving a 70B model)",
} as const satisfies PolicyOptionSchema;

/**
 * The `balanceSlackTokens` option of the policies that cost a request with the fleet cost (stages/fleet-cost.ts:
 * `cache-aware`, `oracle`): one range and default; each policy documents what the slack decides in it.
 */
export const BALANCE_SLACK_TOKENS_OPTION = {
  name: 'balanceSlackTokens',
  type: 'integer',
  min: 0,
  max: 1_000_000,
  default: 512,
  valueName: 'tokens',
} as const;
