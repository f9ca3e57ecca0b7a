import { SeededRng } from '../common/seeded-rng';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { poissonArrivalsMs } from './load-shape';
import { labelledText, LabelledTextCache } from './synthetic-text';
import { canonicalSpec, COMMON_OPTIONS, loadFromOptions, parametersOf, requestId, type Workload } from './workload';
import { resolveOptions, WorkloadSpecError, type OptionSchema } from './workload-options';
import type { WorkloadApi, WorkloadRequest } from './workload-request';

/**
 * SGLang's `generated-shared-prefix` benchmark shape (sgl-project/sglang bench_serving.py defaults: 64 groups ×
 * 16 prompts, a 2,048-token system prompt per group, a 128-token question per prompt, 256 output tokens,
 * exact lengths, requests shuffled). Every prompt of a group repeats the group's system prompt.
 */
export const SHARED_SYSTEM_OPTIONS = {
  groups: { type: 'int', min: 1, max: 100000, default: 64, description: 'distinct system prompts' },
  promptsPerGroup: { type: 'int', min: 1, max: 100000, default: 16, description: 'questions per system prompt' },
  systemTokens: { type: 'int', min: 1, max: 1000000, default: 2048, description: 'tokens of each system prompt' },
  questionTokens: { type: 'int', min: 1, max: 1000000, default: 128, description: 'tokens of each question' },
  outputTokens: { type: 'int', min: 1, max: 100000, default: 256, description: 'tokens to generate per request' },
  order: {
    type: 'enum',
    values: ['shuffled', 'grouped'],
    default: 'shuffled',
    description: 'shuffled: groups interleave at random (SGLang default); grouped: group by group',
  },
  api: {
    type: 'enum',
    values: ['chat', 'completion'],
    default: 'chat',
    description: 'chat: system = system prompt, user = question; completion: prompt = both',
  },
  seed: COMMON_OPTIONS.seed,
  rate: { ...COMMON_OPTIONS.rate, default: 8 },
  count: {
    ...COMMON_OPTIONS.count,
    description: 'send only the first this many requests (default: all groups × promptsPerGroup)',
  },
  concurrency: {
    ...COMMON_OPTIONS.concurrency,
    description: 'closed loop: keep this many requests in flight, in workload order (default: open loop at rate)',
  },
} as const satisfies OptionSchema;

export interface SharedSystemOptions {
  readonly groups: number;
  readonly promptsPerGroup: number;
  readonly systemTokens: number;
  readonly questionTokens: number;
  readonly outputTokens: number;
  readonly order: 'shuffled' | 'grouped';
  readonly api: WorkloadApi;
  readonly seed: number;
  readonly rate: number;
  readonly count?: number;
  readonly concurrency?: number;
}

/** The order array holds one int per request; beyond this the workload would not be "small". */
const MAX_REQUESTS = 10_000_000;

export function sharedSystemWorkload(
  given: Partial<SharedSystemOptions> | Record<string, string> = {},
  fromText = false,
): Workload {
  const resolved = resolveOptions('shared-system', SHARED_SYSTEM_OPTIONS, given, fromText);
  const options = resolved as unknown as SharedSystemOptions;
  const total = options.groups * options.promptsPerGroup;
  if (total > MAX_REQUESTS) {
    throw new WorkloadSpecError('shared-system', [
      `groups × promptsPerGroup must be at most ${MAX_REQUESTS} (got ${total})`,
    ]);
  }
  const size = Math.min(total, options.count ?? total);

  /** Request slot k → (group, question) = (order[k] / promptsPerGroup, order[k] % promptsPerGroup). */
  function requestOrder(rng: SeededRng): Int32Array {
    const order = new Int32Array(total);
    for (let i = 0; i < total; i++) order[i] = i;
    if (options.order === 'shuffled') {
      for (let i = total - 1; i > 0; i--) {
        const j = rng.nextInt(i + 1);
        const t = order[i];
        order[i] = order[j]!;
        order[j] = t;
      }
    }
    return order;
  }

  function* requests(): Generator<WorkloadRequest, void, undefined> {
    const root = new SeededRng(options.seed);
    const arrivals = poissonArrivalsMs(root.fork('arrivals'), options.rate);
    const order = requestOrder(root.fork('order'));
    const systems = new LabelledTextCache(options.seed, 16_000_000);
    for (let index = 0; index < size; index++) {
      const slot = order[index];
      const group = Math.floor(slot / options.promptsPerGroup);
      const question = slot % options.promptsPerGroup;
      const system = systems.get(`shared-system/system/${group}`, options.systemTokens * CHARS_PER_TOKEN);
      const user = labelledText(
        options.seed,
        `shared-system/question/${group}/${question}`,
        options.questionTokens * CHARS_PER_TOKEN,
      );
      const base = {
        index,
        id: requestId('ss', index),
        arrivalMs: arrivals.next().value,
        maxTokens: options.outputTokens,
        group,
      };
      const key = `shared-system/${group}`;
      if (options.api === 'completion')
        yield { ...base, kind: 'completion', prompt: system + user, sharedHead: { key, length: system.length } };
      else
        yield {
          ...base,
          kind: 'chat',
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
          sharedHead: { key, length: 1 },
        };
    }
  }

  return {
    kind: 'shared-system',
    spec: canonicalSpec('shared-system', SHARED_SYSTEM_OPTIONS, resolved),
    parameters: parametersOf(resolved),
    load: loadFromOptions(resolved),
    expectedRequests: size,
    expectedRequestsExact: true,
    description: `${options.groups} system prompts × ${options.promptsPerGroup} questions, ${options.systemTokens} + ${options.questionTokens} tokens, ${options.order}`,
    notes: [],
    requests,
  };
}
