import type { RoutingRequest } from '../protocol/routing-request';
import type { PrefixIndex } from '../state/prefix-index';
import type { RoutingBlockKey, StateHashKey } from '../state/state-hash-key';
import type { PolicyConfig } from './policy-config';
import { BALANCE_SLACK_TOKENS_OPTION, definePolicy, KV_CACHE_TOKENS_OPTION } from './policy-definition';
import { CHARS_PER_TOKEN, estimatedPromptTokens } from './prompt-tokens';
import { coldPlacementKey } from './routing-blocks';
import type { InstanceView, RoutingBlockHashing } from './routing-policy';
import { coldPlacementPicker, DEFAULT_COLD_PLACEMENT, type ColdPlacement } from './stages/cold-placement-picker';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { nearEqualCostPicker } from './stages/near-equal-cost-picker';
import { overShareFilter } from './stages/over-share-filter';
import { PredictedCostCandidates, type CostCandidate, type PromptFacts } from './stages/predicted-cost-candidates';
import { PrefixMemory } from './stages/prefix-memory';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { SessionAffinityPicker } from './stages/session-affinity-picker';
import { StagedPolicy } from './stages/staged-policy';

export interface CacheAwareOptions {
  /** Characters per routing block. */
  readonly blockChars: number;
  /** KV capacity per instance in tokens, when the instance view does not carry the engine's own figure. */
  readonly kvCacheTokens: number;
  /** Predicted prefill differences up to this many tokens count as equal; load decides among them. */
  readonly balanceSlackTokens: number;
  /** Tokens an engine step schedules (vLLM max_num_batched_tokens): decodes share it with prefill. */
  readonly stepTokens: number;
  /** Request header naming a session; '' turns session affinity off. */
  readonly sessionHeader: string;
  /** Sessions remembered (least recently used forgotten first). */
  readonly maxSessions: number;
  /** How a prompt no instance holds is placed among those eligible (ColdPlacement). */
  readonly coldPlacement: ColdPlacement;
}

export type CacheAwareReason = 'cache-match' | 'balanced' | 'cold-rendezvous' | 'session-affinity';

/**
 * `cache-aware`: routes each request where its prompt is predicted to start fastest.
 *
 * - **Prediction.** The routing text is cut into `blockChars`-character blocks with chained hashes seeded by the
 *   model and the tenant key; a per-instance LRU index (state/prefix-index.ts) of the blocks each instance was
 *   recently sent, sized from the instance's KV capacity, gives the longest cached prefix per instance.
 * - **Cost.** Predicted work ahead of the request's first token = prefill tokens queued on the instance + the
 *   uncached part of this prompt + one token per decoding sequence for every engine step that prefill takes
 *   (vLLM schedules every running decode's token in each step, next to prefill chunks, and a step's time grows
 *   with the tokens it schedules), plus the prefix tokens this choice would recompute that the best-matching
 *   instance holds (beyond `balanceSlackTokens`): work the fleet pays for later, on a busy fleet as queueing of
 *   later requests, and once more where its copy overflows that instance's cache (the blocks it evicts are
 *   recomputed later). A long match on a swamped instance still loses to a shorter one on an idle instance, but only
 *   when the wait saved exceeds the work wasted.
 * Built from stages (stages/): the serves-model and healthy filters; the predicted-cost candidates (prediction and
 * cost below); the session-affinity picker; the over-share filter (bounded load in requests sent and in flight, and
 * its floor); the cold-rendezvous picker for a prompt no candidate holds; the near-equal-cost picker.
 *
 * - **Balance.** Instances whose cost is within `balanceSlackTokens` of the cheapest are equal; among them the one
 *   with the fewest requests in flight wins, then the longest match, then the rendezvous rank of the prompt's
 *   first block. So a saving too small to matter (a short shared system prompt) does not pile load on one
 *   instance. A prompt with no match anywhere goes, among the eligible, to the fewest requests in flight per unit
 *   of speed (`coldPlacement` 'least-loaded'), or where rendezvous hashing puts it ('rendezvous': replicas that see
 *   only their own requests agree on it).
 * - **Mixed speeds.** Costs are in fastest-instance time (work × fastest speed ÷ the instance's). A cold prompt is
 *   placed by where it would start (work queued ahead × that ratio, plus its own prefill at the fastest speed) and
 *   by load per unit of speed, or weighted rendezvous (weight = speed ÷ fastest), so new prefix groups, and the
 *   hits that follow them, spread in proportion to speed; a prompt with a match follows the full cost, hits included.
 * - **Hot prefixes** stay on the instances that hold them until their queue costs more than recomputing the
 *   prefix elsewhere; then the next instance (by load, then rendezvous rank) takes some and holds the prefix
 *   too: the set grows with load, never to every instance at light load, and never stays one when it is swamped.
 * - **Sessions.** A request carrying the session header goes to its session's instance unless that one is
 *   unhealthy or overloaded (following it would cost more than recomputing the whole prompt on the cheapest).
 * - **Observed instances.** When the caller observes what an instance publishes about itself
 *   (`InstanceView.observedBlocks`: every replica's sends, corrected by the instance's engine), a prompt's match
 *   there is the instance's index as of the observation plus what this router sent it since, and index fill is the
 *   instance's; the load fields are then the instance's own count plus this router's changes since, the same rule.
 *   So several router replicas decide on the same state.
 * - **Feedback.** When the engine reports `cached_tokens` clearly below the prediction, that instance evicted
 *   the missing blocks, and with LRU everything it used less recently too: those entries are dropped, unless the
 *   report contradicts what the engine was seen serving or evicts faster than it admits (EngineFeedback: a
 *   request that renders a hot prefix differently cannot empty the index).
 */
export class CacheAwarePolicy extends StagedPolicy<CostCandidate, CacheAwareReason, PromptFacts> {
  readonly wantsKvCapacity = true;
  readonly routingBlocks: RoutingBlockHashing;
  /** A rejected request's blocks are in no engine's cache: they enter the index only once an engine accepted it. */
  readonly commitWhen = 'accepted';
  private readonly memory: PrefixMemory;

  constructor(
    readonly options: CacheAwareOptions,
    /** The deployment's secret its block hashes are keyed with (a random one for this process when none is given). */
    stateHashKey?: StateHashKey,
  ) {
    const memory = new PrefixMemory(options, stateHashKey);
    const tokensPerBlock = options.blockChars / CHARS_PER_TOKEN;
    super('cache-aware', {
      factsOf: (request, snapshot) => ({
        request,
        snapshot,
        hashes: memory.blockHashesOf(request),
        promptTokens: Math.max(1, estimatedPromptTokens(request)),
        tokensPerBlock,
        coldKey: coldPlacementKey(request, options.blockChars),
      }),
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: new PredictedCostCandidates(memory, options),
      stages: [
        new SessionAffinityPicker(options.sessionHeader, options.maxSessions, 'session-affinity'),
        overShareFilter(memory, options),
        coldPlacementPicker(options.balanceSlackTokens, options.coldPlacement, 'cold-rendezvous'),
        nearEqualCostPicker(options.balanceSlackTokens, { matched: 'cache-match', balanced: 'balanced' }),
      ],
    });
    this.memory = memory;
    this.routingBlocks = memory.routingBlocks;
  }

  /** The per-instance index of the blocks this router sent each instance. */
  get index(): PrefixIndex {
    return this.memory.index;
  }

  /** The deployment's secret the block hashes are keyed with. */
  get stateHashKey(): StateHashKey {
    return this.memory.stateHashKey;
  }

  /** Chained hashes of the request's full routing blocks (memoized for the decide → commit of one request). */
  blockHashesOf(request: RoutingRequest): readonly RoutingBlockKey[] {
    return this.memory.blockHashesOf(request);
  }

  /** Index capacity for an instance: its KV capacity in routing blocks. */
  capacityBlocksOf(view: InstanceView): number {
    return this.memory.capacityBlocksOf(view);
  }
}

/**
 * `cache-aware` as router replicas that see only their own requests (no `--observe-instances`) must run it: each
 * counts only its own requests in flight, so least-loaded cold placement would put a new prefix in a different
 * place on each, while the rendezvous order is the same on all (docs/router.md, Several router replicas).
 */
export const CACHE_AWARE_FOR_BLIND_REPLICAS: PolicyConfig = { name: 'cache-aware', coldPlacement: 'rendezvous' };

/** True when `policy` is `cache-aware` placing cold prompts by load, which needs every decider to see the same load. */
export function placesColdPromptsByLoad(policy: PolicyConfig): boolean {
  return policy.name === 'cache-aware' && (policy.coldPlacement ?? DEFAULT_COLD_PLACEMENT) === 'least-loaded';
}

export const cacheAwareDefinition = definePolicy({
  name: 'cache-aware',
  description:
    'predicted time to first token: queued prefill + uncached part of the prompt (per-instance LRU index of chained block hashes) + decode pressure; near-equal costs go to the least loaded; cold prompts to the fewest in flight per unit of prefill speed (or by rendezvous, for replicas that see only their own requests); X-Session-Id affinity',
  reasons: ['cache-match', 'balanced', 'cold-rendezvous', 'session-affinity'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'candidates', name: 'predicted-cost' },
    { kind: 'picker', name: 'session-affinity' },
    { kind: 'filter', name: 'over-share' },
    { kind: 'picker', name: 'cold-placement' },
    { kind: 'picker', name: 'near-equal-cost' },
  ],
  options: [
    {
      name: 'blockChars',
      type: 'integer',
      min: 16,
      max: 65536,
      default: 256,
      valueName: 'chars',
      doc: 'characters per routing block (256 = 64 tokens = 4 vLLM blocks: a 128k-token prompt is 2,000 blocks, and a prediction is off by < 64 tokens)',
    },
    KV_CACHE_TOKENS_OPTION,
    {
      ...BALANCE_SLACK_TOKENS_OPTION,
      doc: "predicted prefill differences up to this are treated as equal and load decides (512 ≈ a request's fixed overhead: HTTP, tokenization and one engine step)",
    },
    {
      name: 'stepTokens',
      type: 'integer',
      min: 1,
      max: 1_000_000,
      default: 8192,
      valueName: 'tokens',
      doc: "tokens per engine step shared by decodes and prefill (vLLM's max_num_batched_tokens default with chunked prefill)",
    },
    {
      name: 'sessionHeader',
      type: 'string',
      pattern: /^$|^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/,
      patternDoc: "a lower-case HTTP header name of 1–64 characters, or '' to turn session affinity off",
      default: 'x-session-id',
      valueName: 'header',
      doc: 'request header naming a session; its requests stay on one instance unless it is unhealthy or overloaded',
    },
    {
      name: 'maxSessions',
      type: 'integer',
      min: 1,
      max: 10_000_000,
      default: 100_000,
      valueName: 'n',
      doc: 'sessions remembered, least recently used forgotten first (bounds memory)',
    },
    {
      name: 'coldPlacement',
      type: 'string',
      pattern: /^(least-loaded|rendezvous)$/,
      patternDoc: 'least-loaded or rendezvous',
      default: DEFAULT_COLD_PLACEMENT,
      valueName: 'least-loaded|rendezvous',
      doc: 'where a prompt no instance holds goes among the eligible: least-loaded (fewest in flight per unit of speed; one router, or replicas with --observe-instances on) or rendezvous (replicas that see only their own requests agree on it)',
    },
  ],
  readsEngineCache: true,
  create: (o, deps) =>
    new CacheAwarePolicy(
      {
        blockChars: o.blockChars,
        kvCacheTokens: o.kvCacheTokens,
        balanceSlackTokens: o.balanceSlackTokens,
        stepTokens: o.stepTokens,
        sessionHeader: o.sessionHeader,
        maxSessions: o.maxSessions,
        coldPlacement: o.coldPlacement as ColdPlacement,
      },
      deps.stateHashKey,
    ),
});
