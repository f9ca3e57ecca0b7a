/**
 * Calibration profiles: everything the engine model needs to know about one vLLM instance on one kind of
 * hardware, as data. Built-in profiles live in router/profiles/*.json; any JSON file of the same shape can be
 * loaded with `loadProfileFile`.
 */
import { ConfigError } from '../common/config-error';
import {
  ENGINE_ARGS,
  engineArgValueProblem,
  integerArgRange,
  type SchedulingPolicy,
  schedulerRelationProblems,
} from './engine-args';
import { readFileSync } from 'node:fs';
import h200Llama8b from '../../profiles/h200-llama-3.1-8b.json';
import p4dLlama70b from '../../profiles/p4d-llama-3.1-70b.json';
import p4deLlama70b from '../../profiles/p4de-llama-3.1-70b.json';
import p5Llama70b from '../../profiles/p5-llama-3.1-70b.json';
import p5eLlama70b from '../../profiles/p5e-llama-3.1-70b.json';
import tiny from '../../profiles/tiny.json';

/** Step time = baseMs + max(memory-bound decode term, compute-bound term); see `StepTimeModel`. */
export interface StepTimeCoefficients {
  /** Fixed per-step cost (scheduling, sampling, collective communication). */
  readonly baseMs: number;
  /** Memory-bound floor of a step that decodes anything: reading the weights once. */
  readonly decodeFloorMs: number;
  /** Memory-bound cost per context token of every decoding sequence (reading its KV), in nanoseconds. */
  readonly decodeNsPerContextToken: number;
  /** Compute cost per scheduled token (dense layers), in microseconds. */
  readonly usPerScheduledToken: number;
  /** Compute cost per (new token, attended token) pair, in nanoseconds: Σ new·(cached + new/2). */
  readonly attentionNsPerTokenPair: number;
}

export interface EngineProfile {
  readonly name: string;
  readonly description: string;
  /** Model name served on /v1/models when the emulator is not given one. */
  readonly modelName: string;
  /** Tokens per KV block (vLLM `--block-size`). */
  readonly blockTokens: number;
  /** KV-cache capacity in blocks (vLLM's "GPU KV cache size" / block size). */
  readonly kvCapacityBlocks: number;
  /** Token budget of one step (vLLM `--max-num-batched-tokens`). */
  readonly maxNumBatchedTokens: number;
  /** Most sequences running at once (vLLM `--max-num-seqs`). */
  readonly maxNumSeqs: number;
  /** Most tokens one request computes in a step (vLLM `--long-prefill-token-threshold`); absent or 0: no cap. */
  readonly longPrefillTokenThreshold?: number;
  /** vLLM `--scheduling-policy`; absent: `fcfs`. */
  readonly schedulingPolicy?: SchedulingPolicy;
  /** Longest prompt + output (vLLM `--max-model-len`). */
  readonly maxModelLen: number;
  /** Output tokens when a request sets no max_tokens. */
  readonly defaultMaxTokens: number;
  /** Delay between a request's arrival and its entry into the engine (HTTP, templating, tokenization). */
  readonly requestOverheadMs: number;
  readonly stepTime: StepTimeCoefficients;
  /** Where each number comes from (free text, not used by the model). */
  readonly notes?: Readonly<Record<string, string>>;
  /** The published documents the numbers are derived from (not used by the model). */
  readonly sources?: readonly ProfileSource[];
}

/** One published document a profile's numbers come from: what it states, where, and when. */
export interface ProfileSource {
  /** Short name the notes refer to. */
  readonly id: string;
  /** The document and the figures taken from it. */
  readonly title: string;
  readonly url: string;
  /** When the document (or the product it describes) was published. */
  readonly published: string;
  /** When this profile cited it. */
  readonly cited: string;
}

/** A profile (--profile name or file) that fails validation, a ConfigError; the message names the field and the allowed range. */
export class ProfileError extends ConfigError {
  constructor(message: string) {
    super([message]);
    this.name = 'ProfileError';
  }
}

const BUILTIN_SOURCES: Readonly<Record<string, unknown>> = {
  'p5-llama-3.1-70b': p5Llama70b,
  // The fallback types `instancePools` offers for the same model (docs/benchmarks.md, "Mixed fleets").
  'p5e-llama-3.1-70b': p5eLlama70b,
  'p4de-llama-3.1-70b': p4deLlama70b,
  'p4d-llama-3.1-70b': p4dLlama70b,
  'h200-llama-3.1-8b': h200Llama8b,
  tiny,
};

/** Names of the profiles shipped in router/profiles/. */
export const BUILTIN_PROFILE_NAMES: readonly string[] = Object.keys(BUILTIN_SOURCES);

export const DEFAULT_PROFILE_NAME = 'p5-llama-3.1-70b';

/** A built-in profile by name. */
export function builtinProfile(name: string): EngineProfile {
  const source = BUILTIN_SOURCES[name];
  if (source === undefined) {
    throw new ProfileError(
      `unknown profile "${name}": expected one of ${BUILTIN_PROFILE_NAMES.join(', ')} or a path to a .json file`,
    );
  }
  return validateProfile(source, `built-in profile ${name}`);
}

/** A profile from a JSON file. */
export function loadProfileFile(path: string): EngineProfile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ProfileError(`cannot read profile file ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ProfileError(`profile file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return validateProfile(parsed, `profile file ${path}`);
}

/** `name` of a built-in profile, or a path to a JSON file (anything ending in .json or containing a slash). */
export function resolveProfile(nameOrPath: string): EngineProfile {
  if (nameOrPath.endsWith('.json') || nameOrPath.includes('/') || nameOrPath.includes('\\'))
    return loadProfileFile(nameOrPath);
  return builtinProfile(nameOrPath);
}

interface NumberRule {
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

const INT = (min: number, max: number): NumberRule => ({ min, max, integer: true });
const REAL = (min: number, max: number): NumberRule => ({ min, max, integer: false });

const TOP_LEVEL_NUMBERS: Readonly<Record<string, NumberRule>> = {
  blockTokens: INT(1, 1024),
  kvCapacityBlocks: INT(1, 100_000_000),
  maxNumBatchedTokens: INT(integerArgRange('maxNumBatchedTokens').min, integerArgRange('maxNumBatchedTokens').max),
  maxNumSeqs: INT(integerArgRange('maxNumSeqs').min, integerArgRange('maxNumSeqs').max),
  maxModelLen: INT(2, 100_000_000),
  defaultMaxTokens: INT(1, 100_000_000),
  requestOverheadMs: REAL(0, 60_000),
};

const STEP_TIME_NUMBERS: Readonly<Record<keyof StepTimeCoefficients, NumberRule>> = {
  baseMs: REAL(0, 60_000),
  decodeFloorMs: REAL(0, 60_000),
  decodeNsPerContextToken: REAL(0, 1e9),
  usPerScheduledToken: REAL(0, 1e9),
  attentionNsPerTokenPair: REAL(0, 1e9),
};

function checkNumber(where: string, field: string, value: unknown, rule: NumberRule): number {
  const kind = rule.integer ? 'an integer' : 'a number';
  if (typeof value !== 'number' || !Number.isFinite(value) || (rule.integer && !Number.isInteger(value))) {
    throw new ProfileError(
      `${where}: "${field}" must be ${kind} in [${rule.min}, ${rule.max}], got ${JSON.stringify(value)}`,
    );
  }
  if (value < rule.min || value > rule.max) {
    throw new ProfileError(`${where}: "${field}" must be ${kind} in [${rule.min}, ${rule.max}], got ${value}`);
  }
  return value;
}

function checkString(where: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ProfileError(`${where}: "${field}" must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks an untrusted object against the profile shape and the relations between fields, and returns a
 * frozen copy. `where` names the source in error messages.
 */
export function validateProfile(value: unknown, where = 'profile'): EngineProfile {
  if (!isRecord(value)) throw new ProfileError(`${where}: must be a JSON object`);
  const known = new Set([
    ...Object.keys(TOP_LEVEL_NUMBERS),
    'name',
    'description',
    'modelName',
    'stepTime',
    'notes',
    'sources',
    ...OPTIONAL_SCHEDULER_FIELDS,
  ]);
  for (const key of Object.keys(value)) {
    if (!known.has(key)) throw new ProfileError(`${where}: unknown field "${key}" (allowed: ${[...known].join(', ')})`);
  }
  const numbers: Record<string, number> = {};
  for (const [field, rule] of Object.entries(TOP_LEVEL_NUMBERS))
    numbers[field] = checkNumber(where, field, value[field], rule);

  const rawStep = value.stepTime;
  if (!isRecord(rawStep))
    throw new ProfileError(`${where}: "stepTime" must be an object with ${Object.keys(STEP_TIME_NUMBERS).join(', ')}`);
  for (const key of Object.keys(rawStep)) {
    if (!(key in STEP_TIME_NUMBERS)) {
      throw new ProfileError(
        `${where}: unknown field "stepTime.${key}" (allowed: ${Object.keys(STEP_TIME_NUMBERS).join(', ')})`,
      );
    }
  }
  const step: Record<string, number> = {};
  for (const [field, rule] of Object.entries(STEP_TIME_NUMBERS))
    step[field] = checkNumber(where, `stepTime.${field}`, rawStep[field], rule);
  if (step.baseMs + step.decodeFloorMs <= 0) {
    throw new ProfileError(
      `${where}: "stepTime.baseMs" + "stepTime.decodeFloorMs" must be > 0 so every step takes time`,
    );
  }

  let notes: Record<string, string> | undefined;
  if (value.notes !== undefined) {
    if (!isRecord(value.notes) || Object.values(value.notes).some((n) => typeof n !== 'string')) {
      throw new ProfileError(`${where}: "notes" must be an object of strings`);
    }
    notes = { ...(value.notes as Record<string, string>) };
  }

  const sources = value.sources === undefined ? undefined : checkSources(where, value.sources);
  const scheduler = checkSchedulerFields(where, value, numbers);

  const capacityTokens = numbers.kvCapacityBlocks * numbers.blockTokens;
  if (numbers.maxModelLen > capacityTokens) {
    // vLLM refuses to start in this case: one maximal request could never fit and would wait forever.
    throw new ProfileError(
      `${where}: "maxModelLen" (${numbers.maxModelLen}) must be <= kvCapacityBlocks x blockTokens (${capacityTokens}), ` +
        'or a maximal request could never be scheduled',
    );
  }

  return Object.freeze({
    name: checkString(where, 'name', value.name),
    description: checkString(where, 'description', value.description),
    modelName: checkString(where, 'modelName', value.modelName),
    blockTokens: numbers.blockTokens,
    kvCapacityBlocks: numbers.kvCapacityBlocks,
    maxNumBatchedTokens: numbers.maxNumBatchedTokens,
    maxNumSeqs: numbers.maxNumSeqs,
    maxModelLen: numbers.maxModelLen,
    defaultMaxTokens: numbers.defaultMaxTokens,
    requestOverheadMs: numbers.requestOverheadMs,
    ...scheduler,
    stepTime: Object.freeze(step as unknown as StepTimeCoefficients),
    ...(notes ? { notes: Object.freeze(notes) } : {}),
    ...(sources ? { sources } : {}),
  });
}

/** Scheduler fields a profile may leave out (vLLM's defaults then apply); ranges from engine-args.ts. */
const OPTIONAL_SCHEDULER_FIELDS = ['longPrefillTokenThreshold', 'schedulingPolicy'] as const;

function checkSchedulerFields(
  where: string,
  value: Record<string, unknown>,
  numbers: Record<string, number>,
): Partial<Pick<EngineProfile, (typeof OPTIONAL_SCHEDULER_FIELDS)[number]>> {
  const present: Record<string, unknown> = {};
  for (const spec of ENGINE_ARGS) {
    if (!(OPTIONAL_SCHEDULER_FIELDS as readonly string[]).includes(spec.field) || value[spec.field] === undefined)
      continue;
    const problem = engineArgValueProblem(spec, value[spec.field]);
    if (problem !== undefined) throw new ProfileError(`${where}: "${spec.field}" (vLLM --${spec.flag}) ${problem}`);
    present[spec.field] = value[spec.field];
  }
  const settings = { maxNumBatchedTokens: numbers.maxNumBatchedTokens, maxNumSeqs: numbers.maxNumSeqs, ...present };
  const relation = schedulerRelationProblems(`${where}:`, settings, numbers.maxModelLen);
  if (relation.length > 0) throw new ProfileError(relation[0]);
  return present;
}

const SOURCE_FIELDS = ['id', 'title', 'url', 'published', 'cited'] as const;

function checkSources(where: string, value: unknown): readonly ProfileSource[] {
  if (!Array.isArray(value))
    throw new ProfileError(`${where}: "sources" must be an array of { ${SOURCE_FIELDS.join(', ')} }`);
  return Object.freeze(
    value.map((source, i) => {
      if (!isRecord(source))
        throw new ProfileError(`${where}: "sources[${i}]" must be an object with ${SOURCE_FIELDS.join(', ')}`);
      for (const key of Object.keys(source)) {
        if (!(SOURCE_FIELDS as readonly string[]).includes(key))
          throw new ProfileError(
            `${where}: unknown field "sources[${i}].${key}" (allowed: ${SOURCE_FIELDS.join(', ')})`,
          );
      }
      const checked = Object.fromEntries(
        SOURCE_FIELDS.map((f) => [f, checkString(where, `sources[${i}].${f}`, source[f])]),
      );
      return Object.freeze(checked as unknown as ProfileSource);
    }),
  );
}

/**
 * Prefill tokens per second of an idle engine with this profile computing full steps of uncached prompt
 * (`maxNumBatchedTokens` new tokens per step, each attending to the step's earlier tokens): the instance's prefill
 * capacity. The step-time model's own arithmetic (StepTimeModel), so it is exactly what the engine model runs at;
 * a mixed fleet's capacity shares come from it.
 */
export function prefillTokensPerSecond(profile: EngineProfile): number {
  const tokens = profile.maxNumBatchedTokens;
  const s = profile.stepTime;
  const stepMs =
    s.baseMs +
    Math.max(
      s.decodeFloorMs,
      s.usPerScheduledToken * 1e-3 * tokens + s.attentionNsPerTokenPair * 1e-6 * tokens * (tokens / 2),
    );
  return (tokens / stepMs) * 1000;
}

/** A fleet's runs of consecutive instances with one profile, in order. */
export function fleetGroups(
  fleet: readonly EngineProfile[],
): { readonly profile: EngineProfile; readonly count: number }[] {
  const groups: { profile: EngineProfile; count: number }[] = [];
  for (const profile of fleet) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last.profile.name === profile.name) last.count++;
    else groups.push({ profile, count: 1 });
  }
  return groups;
}

/** How a fleet reads in logs and reports: `7 × p5-llama-3.1-70b`, or `5 × p5-llama-3.1-70b + 2 × p4d-llama-3.1-70b`. */
export function fleetText(fleet: readonly EngineProfile[]): string {
  return fleetGroups(fleet)
    .map((g) => `${g.count} × ${g.profile.name}`)
    .join(' + ');
}
