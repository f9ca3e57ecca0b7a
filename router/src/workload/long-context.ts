import { SeededRng } from '../common/seeded-rng';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { GroupPicker, type Popularity } from './group-popularity';
import { poissonArrivalsMs } from './load-shape';
import { labelledText, LabelledTextCache } from './synthetic-text';
import {
  canonicalSpec,
  COMMON_OPTIONS,
  drawInRange,
  expectedPoissonCount,
  loadFromOptions,
  parametersOf,
  requestId,
  withinLimits,
  type Workload,
} from './workload';
import { resolveOptions, type IntRange, type OptionSchema } from './workload-options';
import type { WorkloadApi, WorkloadRequest } from './workload-request';

/**
 * AWS's long-context benchmark shape: ~8,000-token prompts in which groups of requests share a long prefix
 * (≈7,000 tokens, e.g. a document) followed by a unique suffix (≈1,000 tokens, e.g. a question).
 *
 * Default sizing (docs/workloads.md has the arithmetic and the table): an ml.p5.48xlarge running Llama 3.1
 * 70B holds ≈1.35 M tokens of KV, i.e. ≈190 distinct 7,000-token prefixes. 550 groups is ≈2.9× what one
 * instance holds but ≈40 % of what 7 instances hold when each sees only its share of the groups: a cache-only
 * model of 7 such instances gives RANDOM ≈25 % and group-affine placement ≈85 % (AWS measured ≈25 % → ≈82 %).
 */
export const LONG_CONTEXT_OPTIONS = {
  groups: { type: 'int', min: 1, max: 1000000, default: 550, description: 'distinct shared prefixes' },
  prefixTokens: {
    type: 'int',
    min: 0,
    max: 1000000,
    default: 7000,
    description: 'tokens of the shared prefix of every group',
  },
  suffixTokens: {
    type: 'range',
    min: 1,
    max: 1000000,
    default: { min: 900, max: 1100 },
    description: 'tokens of the unique suffix, drawn uniformly per request',
  },
  outputTokens: {
    type: 'range',
    min: 1,
    max: 100000,
    default: { min: 256, max: 256 },
    description: 'tokens to generate, drawn uniformly per request',
  },
  popularity: {
    type: 'enum',
    values: ['uniform', 'zipf'],
    default: 'uniform',
    description: 'how often each group is drawn',
  },
  zipfExponent: {
    type: 'number',
    min: 0,
    minExclusive: true,
    max: 5,
    default: 1,
    description: 'Zipf exponent s (group i has weight 1/(i+1)^s); only with popularity=zipf',
  },
  tenants: {
    type: 'int',
    min: 0,
    max: 1000000,
    default: 0,
    description: 'when > 0, group g is sent with tenant key tenant-(g mod tenants) as prompt_cache_key',
  },
  api: {
    type: 'enum',
    values: ['chat', 'completion'],
    default: 'chat',
    description: 'chat: system = shared prefix, user = suffix; completion: prompt = prefix + suffix',
  },
  ...COMMON_OPTIONS,
} as const satisfies OptionSchema;

export interface LongContextOptions {
  readonly groups: number;
  readonly prefixTokens: number;
  readonly suffixTokens: IntRange;
  readonly outputTokens: IntRange;
  readonly popularity: Popularity;
  readonly zipfExponent: number;
  readonly tenants: number;
  readonly api: WorkloadApi;
  readonly seed: number;
  readonly rate: number;
  readonly duration: number;
  readonly count?: number;
  readonly concurrency?: number;
}

/** Texts of recently used group prefixes kept (characters); 550 × 28,000 fits, so a default run builds each once. */
const PREFIX_CACHE_CHARS = 32_000_000;

/** Build the workload. `given` may be partial (defaults fill the rest) or option texts from a spec (`fromText`). */
export function longContextWorkload(
  given: Partial<LongContextOptions> | Record<string, string> = {},
  fromText = false,
): Workload {
  const resolved = resolveOptions('long-context', LONG_CONTEXT_OPTIONS, given, fromText);
  const options = resolved as unknown as LongContextOptions;
  const expected = expectedPoissonCount(resolved);
  const picker = new GroupPicker(options.groups, options.popularity, options.zipfExponent);

  function* requests(): Generator<WorkloadRequest, void, undefined> {
    const root = new SeededRng(options.seed);
    const arrivals = poissonArrivalsMs(root.fork('arrivals'), options.rate);
    const groupRng = root.fork('groups');
    const lengthRng = root.fork('lengths');
    const nextLength = (): number => lengthRng.next();
    const prefixes = new LabelledTextCache(options.seed, PREFIX_CACHE_CHARS);
    for (let index = 0; ; index++) {
      const arrivalMs = arrivals.next().value;
      if (!withinLimits(index, arrivalMs, resolved)) return;
      const group = picker.pick(groupRng);
      const suffixTokens = drawInRange(nextLength, options.suffixTokens);
      const maxTokens = drawInRange(nextLength, options.outputTokens);
      const prefix = prefixes.get(`long-context/prefix/${group}`, options.prefixTokens * CHARS_PER_TOKEN);
      const suffix = labelledText(options.seed, `long-context/suffix/${index}`, suffixTokens * CHARS_PER_TOKEN);
      const tenantKey = options.tenants > 0 ? `tenant-${group % options.tenants}` : undefined;
      const base = {
        index,
        id: requestId('lc', index),
        arrivalMs,
        maxTokens,
        group,
        ...(tenantKey ? { tenantKey } : {}),
      };
      // The group's prefix (and, for chat, the system message holding it) is the same in every request of the group.
      const sharedHead =
        options.prefixTokens > 0
          ? { key: `long-context/${group}`, length: options.api === 'completion' ? prefix.length : 1 }
          : undefined;
      if (options.api === 'completion') {
        yield { ...base, kind: 'completion', prompt: prefix + suffix, ...(sharedHead ? { sharedHead } : {}) };
      } else {
        const messages =
          options.prefixTokens > 0
            ? [
                { role: 'system' as const, content: prefix },
                { role: 'user' as const, content: suffix },
              ]
            : [{ role: 'user' as const, content: suffix }];
        yield { ...base, kind: 'chat', messages, ...(sharedHead ? { sharedHead } : {}) };
      }
    }
  }

  const suffix = options.suffixTokens;
  return {
    kind: 'long-context',
    spec: canonicalSpec('long-context', LONG_CONTEXT_OPTIONS, resolved),
    parameters: parametersOf(resolved),
    load: loadFromOptions(resolved),
    expectedRequests: expected.count,
    expectedRequestsExact: expected.exact,
    description:
      `${options.groups} groups × ${options.prefixTokens} shared + ${suffix.min === suffix.max ? suffix.min : `${suffix.min}–${suffix.max}`} unique tokens, ` +
      `${options.popularity === 'zipf' ? `Zipf(${options.zipfExponent})` : 'uniform'} group popularity`,
    notes: [],
    requests,
  };
}
