/**
 * The vLLM engine arguments the engine model follows, by vLLM's own flag names: one home for their names, ranges
 * and relations, used by `--engine-arg NAME=VALUE` on simulate, plan, emulate and demo, by profile validation, and
 * by the construct at synth (lib/ loads this module from the compiled router, see lib/private/router-settings.ts,
 * so it imports nothing at run time but common/).
 *
 * Ranges follow vLLM's `SchedulerConfig` (vllm/config/scheduler.py, commit 1f8758d5): `max_num_batched_tokens` and
 * `max_num_seqs` are `Field(ge=1)`, `long_prefill_token_threshold` is an int whose 0 means off and which may not
 * exceed `max_model_len`, `policy` is `Literal["fcfs", "priority"]`, and `verify_max_model_len` refuses
 * `max_num_batched_tokens < max_num_seqs`. Upper bounds are ours (vLLM has none): large enough for any GPU.
 */
import { ConfigError } from '../common/config-error';
import { parseDecimalInteger } from '../common/decimal-text';

/** vLLM `--scheduling-policy`: waiting requests by arrival, or by (priority, arrival) with lower priority sooner. */
export type SchedulingPolicy = 'fcfs' | 'priority';

export const SCHEDULING_POLICIES: readonly SchedulingPolicy[] = ['fcfs', 'priority'];

/** The scheduler settings an engine runs with (the profile's fields of the same names). */
export interface EngineSchedulerSettings {
  /** vLLM `--max-num-batched-tokens`: the step's token budget. */
  readonly maxNumBatchedTokens: number;
  /** vLLM `--max-num-seqs`: most requests running at once. */
  readonly maxNumSeqs: number;
  /** vLLM `--long-prefill-token-threshold`: most tokens one request gets in a step; 0 = no cap. */
  readonly longPrefillTokenThreshold?: number;
  /** vLLM `--scheduling-policy`. */
  readonly schedulingPolicy?: SchedulingPolicy;
}

interface IntegerArg {
  readonly kind: 'integer';
  readonly flag: string;
  readonly field: 'maxNumBatchedTokens' | 'maxNumSeqs' | 'longPrefillTokenThreshold';
  readonly min: number;
  readonly max: number;
  readonly meaning: string;
}

interface ChoiceArg {
  readonly kind: 'choice';
  readonly flag: string;
  readonly field: 'schedulingPolicy';
  readonly choices: readonly string[];
  readonly meaning: string;
}

export type EngineArgSpec = IntegerArg | ChoiceArg;

/** Longest context any profile may declare (engine-profile's `maxModelLen` bound), so the threshold's ceiling. */
export const MAX_MODEL_LEN_LIMIT = 100_000_000;

/** Every engine argument the model follows, in the order docs and help list them. */
export const ENGINE_ARGS: readonly EngineArgSpec[] = [
  {
    kind: 'integer',
    flag: 'max-num-batched-tokens',
    field: 'maxNumBatchedTokens',
    min: 1,
    max: 10_000_000,
    meaning: "the step's token budget; at least max-num-seqs",
  },
  {
    kind: 'integer',
    flag: 'max-num-seqs',
    field: 'maxNumSeqs',
    min: 1,
    max: 1_000_000,
    meaning: 'most requests running at once',
  },
  {
    kind: 'integer',
    flag: 'long-prefill-token-threshold',
    field: 'longPrefillTokenThreshold',
    min: 0,
    max: MAX_MODEL_LEN_LIMIT,
    meaning:
      'most tokens one request computes in a step, running and waiting alike (0 = no cap); at most the max-model-len',
  },
  {
    kind: 'choice',
    flag: 'scheduling-policy',
    field: 'schedulingPolicy',
    choices: SCHEDULING_POLICIES,
    meaning: 'waiting order: arrival (fcfs), or the request body\'s "priority" (lower sooner), ties by arrival',
  },
];

/** The range of an integer argument by its profile field (engine-profile.ts validates profiles with it). */
export function integerArgRange(field: IntegerArg['field']): { readonly min: number; readonly max: number } {
  const spec = ENGINE_ARGS.find((s) => s.field === field) as IntegerArg;
  return { min: spec.min, max: spec.max };
}

/** Engine arguments by vLLM flag name, as given (`{ 'max-num-seqs': 256 }`). */
export type EngineArgs = Readonly<Record<string, string | number>>;

/** `max-num-seqs: an integer between 1 and 1000000`: what a flag allows, for messages and docs. */
export function allowedText(spec: EngineArgSpec): string {
  return spec.kind === 'integer'
    ? `an integer between ${spec.min} and ${spec.max}`
    : `one of ${spec.choices.join(', ')}`;
}

function specOf(flag: string): EngineArgSpec | undefined {
  return ENGINE_ARGS.find((s) => s.flag === flag);
}

function unknownText(flag: string): string {
  return `unknown engine argument "${flag}": the engine model follows ${ENGINE_ARGS.map((s) => s.flag).join(', ')}`;
}

/** Whether `value` (a number, or decimal text from a flag or variable) is an integer in the spec's range. */
function integerIn(spec: IntegerArg, value: unknown): boolean {
  const n = typeof value === 'string' ? parseDecimalInteger(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= spec.min && n <= spec.max;
}

/** What is wrong with one argument (`unknown engine argument …` or `… must be …`), or undefined; `where` prefixes it. */
export function engineArgProblem(where: string, flag: string, value: unknown): string | undefined {
  const spec = specOf(flag);
  if (spec === undefined) return `${where}: ${unknownText(flag)}`;
  const problem = engineArgValueProblem(spec, value);
  return problem === undefined ? undefined : `${where} ${flag} ${problem}`;
}

/** `must be … (got …)` when `value` is outside the spec's range, else undefined. */
export function engineArgValueProblem(spec: EngineArgSpec, value: unknown): string | undefined {
  const ok =
    spec.kind === 'integer' ? integerIn(spec, value) : typeof value === 'string' && spec.choices.includes(value);
  return ok ? undefined : `must be ${allowedText(spec)} (got ${JSON.stringify(value)})`;
}

/**
 * Problems between arguments and the engine they configure, as vLLM's `verify_max_model_len` states them:
 * the step budget below the sequence limit, or a threshold above the context length.
 */
export function schedulerRelationProblems(
  where: string,
  settings: EngineSchedulerSettings,
  maxModelLen?: number,
): string[] {
  const problems: string[] = [];
  if (settings.maxNumBatchedTokens < settings.maxNumSeqs)
    problems.push(
      `${where} max-num-batched-tokens (${settings.maxNumBatchedTokens}) must be at least max-num-seqs (${settings.maxNumSeqs})`,
    );
  const threshold = settings.longPrefillTokenThreshold ?? 0;
  if (maxModelLen !== undefined && threshold > maxModelLen)
    problems.push(
      `${where} long-prefill-token-threshold (${threshold}) must be at most max-model-len (${maxModelLen})`,
    );
  return problems;
}

/** `NAME=VALUE` of `--engine-arg`, checked by name and range; a ConfigError naming the flag and what it allows. */
export function parseEngineArg(text: string): { readonly flag: string; readonly value: string | number } {
  const eq = text.indexOf('=');
  const flag = eq < 0 ? text : text.slice(0, eq);
  if (eq < 0 || flag === '')
    throw new ConfigError([
      `--engine-arg must be NAME=VALUE with a vLLM flag name, e.g. max-num-seqs=256 (got ${JSON.stringify(text)})`,
    ]);
  const raw = text.slice(eq + 1);
  const problem = engineArgProblem('--engine-arg', flag, raw);
  if (problem !== undefined) throw new ConfigError([problem]);
  const spec = specOf(flag) as EngineArgSpec;
  return { flag, value: spec.kind === 'integer' ? (parseDecimalInteger(raw) as number) : raw };
}

/** Every `--engine-arg` of a command, parsed; a repeated name is refused (which one wins would be a guess). */
export function parseEngineArgs(texts: readonly string[]): EngineArgs {
  const args: Record<string, string | number> = {};
  const problems: string[] = [];
  for (const text of texts) {
    try {
      const { flag, value } = parseEngineArg(text);
      if (flag in args) problems.push(`--engine-arg ${flag} is given twice (${args[flag]} and ${value})`);
      else args[flag] = value;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(args);
}

/**
 * Settings with the arguments applied over `base` (a profile's), checked against each other and the context
 * length; a ConfigError lists every problem. No arguments: `base` itself.
 */
export function applyEngineArgs<T extends EngineSchedulerSettings & { readonly maxModelLen: number }>(
  base: T,
  args: EngineArgs,
): T {
  if (Object.keys(args).length === 0) return base;
  const merged: Record<string, unknown> = { ...(base as object) };
  for (const [flag, value] of Object.entries(args)) {
    const spec = specOf(flag);
    if (spec === undefined) throw new ConfigError([`--engine-arg: ${unknownText(flag)}`]);
    merged[spec.field] = value;
  }
  const settings = merged as unknown as T;
  const problems = schedulerRelationProblems('--engine-arg', settings, base.maxModelLen);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(settings);
}

/**
 * Each profile of a fleet with the arguments applied (one copy per distinct profile, so instances of one group
 * stay one object); the fleet as it is when there are none, so defaults change nothing.
 */
export function fleetWithEngineArgs<T extends EngineSchedulerSettings & { readonly maxModelLen: number }>(
  fleet: readonly T[],
  args: EngineArgs,
): T[] {
  if (Object.keys(args).length === 0) return [...fleet];
  const applied = new Map<T, T>();
  return fleet.map((profile) => {
    let copy = applied.get(profile);
    if (copy === undefined) {
      copy = applyEngineArgs(profile, args);
      applied.set(profile, copy);
    }
    return copy;
  });
}

/** The arguments as `NAME=VALUE` words, in ENGINE_ARGS order (reports, props, logs). */
export function engineArgsText(args: EngineArgs): string[] {
  return ENGINE_ARGS.filter((s) => s.flag in args).map((s) => `${s.flag}=${args[s.flag]}`);
}
