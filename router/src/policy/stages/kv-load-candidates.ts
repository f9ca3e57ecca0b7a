import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingBlockKey } from '../../state/state-hash-key';
import {
  engineCachedPromptTokens,
  type InstanceView,
  type RoutingDecision,
  type RoutingSnapshot,
} from '../routing-policy';
import type { StateHashKey } from '../../state/state-hash-key';
import { CHARS_PER_TOKEN, estimatedPromptTokens } from '../prompt-tokens';
import { HEALTHY_FILTER } from './healthy-filter';
import { PrefixMemory } from './prefix-memory';
import { SERVES_MODEL_FILTER } from './serves-model-filter';
import type { StagePlan } from './staged-policy';
import type { CandidateStage, DecisionFacts } from './stage';

/** What a block-load router reads about a request. */
export interface KvLoadFacts extends DecisionFacts {
  readonly hashes: readonly RoutingBlockKey[];
  /** The request's prompt in KV blocks (rounded up). */
  readonly promptBlocks: number;
}

/** One worker as a block-load router sees it. */
export interface KvLoadCandidate {
  readonly view: InstanceView;
  /** Leading blocks of the prompt the worker is predicted to hold. */
  readonly overlapBlocks: number;
  /** Prompt blocks queued for prefill on the worker (the caller's queued prefill tokens, in blocks). */
  readonly activePrefillBlocks: number;
  /** KV blocks of the requests this router has in flight there (their prompts, counted at dispatch). */
  readonly activeDecodeBlocks: number;
}

/**
 * Where a block-load router learns each worker's overlap with the prompt: 'router-index', what this router sent it
 * (PrefixMemory: a KV-event-less router's approximation of the worker's cache); 'engine-cache', the blocks the
 * worker's engine itself holds (InstanceView.engine: KV events live, the engine model in the simulator), named by
 * the policy that reads it.
 */
export type OverlapSource =
  { readonly kind: 'router-index' } | { readonly kind: 'engine-cache'; readonly policy: string };

/**
 * For each worker: the prompt's overlap (OverlapSource), the prefill queued there, and the KV blocks of the requests
 * in flight there, which this stage counts itself from dispatch to release, as a router without engine load reports does.
 */
export class KvLoadCandidates implements CandidateStage<KvLoadCandidate, KvLoadFacts> {
  readonly kind = 'candidates';
  readonly name: 'kv-load' | 'engine-kv-load';
  private readonly activeBlocks = new Map<string, number>();
  private readonly dispatched = new WeakMap<RoutingDecision, number>();

  constructor(
    /** What this router sent each worker; undefined: the overlap is read from the engines (engine-cache). */
    private readonly memory: PrefixMemory | undefined,
    private readonly tokensPerBlock: number,
    private readonly promptBlocksOf: (request: RoutingRequest) => number,
    /** The policy named in the error when an engine's state is missing (engine-cache). */
    private readonly policy = '',
  ) {
    this.name = memory === undefined ? 'engine-kv-load' : 'kv-load';
  }

  candidatesOf(instances: readonly InstanceView[], facts: KvLoadFacts): readonly KvLoadCandidate[] {
    return instances.map((view) => ({
      view,
      overlapBlocks: Math.min(this.overlapOf(view, facts), facts.promptBlocks),
      activePrefillBlocks: (view.queuedPrefillTokens ?? 0) / this.tokensPerBlock,
      activeDecodeBlocks: this.activeBlocks.get(view.id) ?? 0,
    }));
  }

  /** Leading full blocks of the prompt the worker holds: by this router's record, or by its engine's own cache. */
  private overlapOf(view: InstanceView, facts: KvLoadFacts): number {
    if (this.memory !== undefined) return this.memory.matchOf(view, facts.hashes).matchedBlocks;
    return Math.floor(engineCachedPromptTokens(view, facts.request, this.policy) / this.tokensPerBlock);
  }

  commit(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void {
    this.memory?.commit(request, decision, snapshot);
    const blocks = this.promptBlocksOf(request);
    this.dispatched.set(decision, blocks);
    this.activeBlocks.set(decision.instance, (this.activeBlocks.get(decision.instance) ?? 0) + blocks);
  }

  release(_request: RoutingRequest, decision: RoutingDecision): void {
    const blocks = this.dispatched.get(decision);
    if (blocks === undefined) return;
    this.dispatched.delete(decision);
    this.activeBlocks.set(decision.instance, (this.activeBlocks.get(decision.instance) ?? 0) - blocks);
  }
}

const NO_HASHES: readonly RoutingBlockKey[] = [];

/**
 * What the block-load routers (dynamo-kv, llm-d, llm-d-precise) decide from before their scorers and picker:
 * serving, healthy workers, each with its overlap in `blockTokens`-token blocks (by default from a PrefixMemory
 * sized by `kvCacheTokens`; OverlapSource) and its load.
 */
export function kvLoadPlan(
  options: { readonly blockTokens: number; readonly kvCacheTokens: number },
  stateHashKey: StateHashKey | undefined,
  overlap: OverlapSource = { kind: 'router-index' },
): Omit<StagePlan<KvLoadCandidate, string, KvLoadFacts>, 'stages'> {
  const memory =
    overlap.kind === 'router-index'
      ? new PrefixMemory(
          { blockChars: options.blockTokens * CHARS_PER_TOKEN, kvCacheTokens: options.kvCacheTokens },
          stateHashKey,
        )
      : undefined;
  const promptBlocksOf = (request: RoutingRequest) => Math.ceil(estimatedPromptTokens(request) / options.blockTokens);
  return {
    factsOf: (request, snapshot) => ({
      request,
      snapshot,
      hashes: memory === undefined ? NO_HASHES : memory.blockHashesOf(request),
      promptBlocks: promptBlocksOf(request),
    }),
    instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
    candidates: new KvLoadCandidates(
      memory,
      options.blockTokens,
      promptBlocksOf,
      overlap.kind === 'engine-cache' ? overlap.policy : '',
    ),
  };
}
