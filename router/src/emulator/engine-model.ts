/**
 * One vLLM instance as a pure state machine in virtual time: continuous batching with chunked prefill under a
 * per-step token budget, FCFS admission, a block prefix cache with LRU eviction of unreferenced blocks, finite
 * KV capacity with preemption by recompute, and a step-time model from the profile. No I/O, no clock, no
 * randomness: the caller says what time it is (`submit`) and how far to run (`runUntil`); the same calls give
 * the same events, bit for bit.
 *
 * The scheduler follows vLLM V1's `Scheduler.schedule()` (vllm/v1/core/sched/scheduler.py, commit b4622cf9): each
 * step first serves running requests in admission order (one token per decoding request, the next prefill chunk
 * for a request still prefilling, at most `--long-prefill-token-threshold` tokens when set), allocating KV slots
 * for the tokens it schedules and preempting when none are left (FCFS: the most recently admitted; priority: the
 * running request with the largest (priority, arrival)); then, if nothing was preempted, admits waiting requests
 * in the queue's order (arrival, or (priority, arrival)) while budget, sequence slots and KV allow, each starting
 * after its longest run of cached leading blocks and capped by the same threshold.
 *
 * Decode-only stretches (every running request decoding, nothing admissible) are fast-forwarded: the model
 * advances k steps at once, computing each step's duration from closed-form sums of the batch's contexts,
 * with no per-request work per step. Its events and times equal step-by-step execution exactly (see tests).
 */
import type { EngineQueue } from '../state/engine-queue';
import { type BlockHash, blockHashes, continueBlockHashes, CHARS_PER_TOKEN, tokenCount } from '../state/block-hash';
import { KvBlockPool } from '../state/kv-block-pool';
import { prefillTokensPerSecond, type EngineProfile } from './engine-profile';
import { outputText } from './output-text';
import { FcfsWaitingQueue, PriorityWaitingQueue, type WaitingQueue } from './waiting-queue';
import type { StepJitter } from './step-jitter';
import { StepTimeModel } from './step-time';

/** A prompt: `promptText`, or `promptTokens` with `blockHashes`, or all three (they must agree). */
export interface PromptInput {
  /** The text the engine tokenizes (for chat: `chatTemplate(messages)`). Lets the engine hash generated blocks too. */
  readonly promptText?: string;
  /** Prompt length in tokens; derived from `promptText` when absent. */
  readonly promptTokens?: number;
  /**
   * Chained hashes of the prompt's full blocks, `blockHashes(promptText, { blockTokens: profile.blockTokens,
   * seed: options.hashSeed })`; computed from `promptText` when absent. Pass them when you already have them.
   */
  readonly blockHashes?: ArrayLike<BlockHash>;
  /**
   * vLLM's `cache_salt`: mixed into the block hashes, so cached blocks are shared only among requests with the same
   * salt (ignored when `blockHashes` are given: the caller hashed them).
   */
  readonly cacheSalt?: string;
  /**
   * The LoRA adapter the request runs with (vLLM `--lora-modules` name), or undefined for the base model: mixed
   * into the block hashes like cache_salt, because vLLM keys a block by the adapter too (the LoRA id is one of
   * a block hash's extra keys: https://docs.vllm.ai/en/latest/design/prefix_caching/), so one prompt under two
   * adapters never shares cached blocks (ignored when `blockHashes` are given).
   */
  readonly loraName?: string;
}

/** What a client asks the engine to do. */
export interface EngineRequestInput extends PromptInput {
  /** Unique among requests the engine still holds. */
  readonly id: string;
  /** Output tokens to generate; more than `maxModelLen - promptTokens` is refused; default `profile.defaultMaxTokens`, capped at what is left. */
  readonly maxTokens?: number;
  /**
   * vLLM's request `priority` (an integer, lower is sooner; default 0). It orders the waiting queue and picks the
   * preemption victim under `schedulingPolicy: 'priority'`; an FCFS engine ignores it (vLLM's API server refuses
   * a non-zero priority then: the HTTP emulator does, see completion-request.ts).
   */
  readonly priority?: number;
}

/** What `submit` accepted. */
export interface SubmittedRequest {
  readonly id: string;
  readonly promptTokens: number;
  /** Output tokens the request will get (exactly this many). */
  readonly maxTokens: number;
  /** Virtual time at which the request enters the waiting queue (submit time + profile.requestOverheadMs). */
  readonly eligibleMs: number;
}

export type EngineRequestErrorCode =
  | 'invalid-request'
  | 'empty-prompt'
  | 'prompt-too-long'
  | 'invalid-max-tokens'
  | 'max-tokens-too-large'
  | 'invalid-priority'
  | 'duplicate-id';

/** A request the engine refuses (the emulator answers these with HTTP 400). */
export class EngineRequestError extends Error {
  constructor(
    readonly code: EngineRequestErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EngineRequestError';
  }
}

/**
 * Why vLLM refuses a prompt of `promptTokens` asking for `maxTokens` output tokens (undefined: the engine's
 * default) on a `maxModelLen`-token context, or undefined when it fits. The engine model's rule, shared with the
 * count `simulate` and `plan` print before a run (sim/context-refusals.ts), so the two cannot disagree.
 */
export function contextLimitRefusal(
  promptTokens: number,
  maxTokens: number | undefined,
  maxModelLen: number,
): EngineRequestError | undefined {
  if (promptTokens >= maxModelLen) {
    // vLLM's wording (OpenAI server input validation): the prompt alone leaves no room for one output token.
    return new EngineRequestError(
      'prompt-too-long',
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${promptTokens} input tokens. ` +
        'Please reduce the length of the input messages.',
    );
  }
  if (
    maxTokens !== undefined &&
    Number.isInteger(maxTokens) &&
    maxTokens >= 1 &&
    promptTokens + maxTokens > maxModelLen
  ) {
    // vLLM refuses an explicit max_tokens that does not fit; only its own default is cut to what is left.
    return new EngineRequestError(
      'max-tokens-too-large',
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${maxModelLen} tokens ` +
        `and your request has ${promptTokens} input tokens (${maxTokens} > ${maxModelLen} - ${promptTokens}).`,
    );
  }
  return undefined;
}

/** The request was scheduled for the first time (`resumed: false`) or again after a preemption. */
export interface AdmittedEvent {
  readonly type: 'admitted';
  readonly id: string;
  /** Start of the step that admitted it. */
  readonly timeMs: number;
  readonly promptTokens: number;
  /** Tokens served from the prefix cache at this admission. */
  readonly cachedTokens: number;
  readonly resumed: boolean;
}

export interface FirstTokenEvent {
  readonly type: 'first-token';
  readonly id: string;
  readonly timeMs: number;
  /** From submit to the end of the step that produced the first token. */
  readonly ttftMs: number;
}

/** One generated token; emitted only with `tokenEvents: true` (the HTTP emulator streams from these). */
export interface TokenEvent {
  readonly type: 'token';
  readonly id: string;
  readonly timeMs: number;
  /** Output tokens generated so far, this one included. */
  readonly outputTokens: number;
}

export interface PreemptedEvent {
  readonly type: 'preempted';
  readonly id: string;
  readonly timeMs: number;
  /** Output tokens generated before the preemption (kept; they are recomputed, not regenerated). */
  readonly outputTokens: number;
}

export interface FinishedEvent {
  readonly type: 'finished';
  readonly id: string;
  readonly timeMs: number;
  readonly promptTokens: number;
  /** Prefix-cache hit at the first admission (what vLLM reports as cached_tokens). */
  readonly cachedTokens: number;
  readonly outputTokens: number;
  readonly ttftMs: number;
  readonly e2eMs: number;
  readonly preemptions: number;
}

export type EngineEvent = AdmittedEvent | FirstTokenEvent | TokenEvent | PreemptedEvent | FinishedEvent;

/** What one step scheduled and how long it took (for tests and benchmarks; see `EngineModelOptions.onStep`). */
export interface StepRecord {
  readonly startMs: number;
  readonly durationMs: number;
  readonly scheduledTokens: number;
  /** Sequences that got a token slot this step. */
  readonly scheduledSequences: number;
  readonly decodeSequences: number;
  readonly runningSequences: number;
  readonly usedBlocks: number;
  /** True for steps advanced by the decode fast path. */
  readonly fastForwarded: boolean;
}

export interface RunOptions {
  /**
   * Return right after a step in which a request finished, even if later steps start before `tMs`. A driver
   * whose next send depends on completions (closed loop, multi-turn) uses it to stay exact.
   */
  readonly stopAfterFinish?: boolean;
  /**
   * Let a decode stretch run past `tMs`: its steps are computed (durations, jitter draws) but applied only when
   * something needs them — `submit` applies those that start before the submit time and drops the rest, a later
   * `runUntil` applies those before its own limit — so an engine nobody sends to is not touched at every
   * instant of the fleet's. `nextRunTimeMs` then says when the engine next needs attention (the stretch's
   * end). Until applied, the stretch's steps are missing from `stats()` and its blocks are not allocated yet;
   * a driver that reads the engine in between must not use it (the simulator reads stats only before its
   * warm-up ends and once every engine is idle). `abort` refuses while a stretch is pending.
   */
  readonly lookahead?: boolean;
}

/** Blocks from which the KV pool reads its index ahead (readAheadEvictions, readAheadRegistrations): fewer gain nothing. */
const READ_AHEAD_MIN_BLOCKS = 8;

/** Steps a decode stretch computes ahead at most (bounds the work a new request makes redundant). */
const LOOKAHEAD_MAX_STEPS = 512;

/**
 * A block the prefix cache just took in (registered under its hash), as vLLM's block pool reports it in a
 * BlockStored event (vllm/v1/core/block_pool.py `cache_full_blocks`, vllm-project/vllm@002f3491).
 */
export interface CachedBlock {
  readonly hash: BlockHash;
  /** The hash of the block before it in its request (undefined for a prompt's first block). */
  readonly parentHash: BlockHash | undefined;
  /** The request's prompt text (undefined when it came as hashes only) and its length in tokens. */
  readonly promptText: string | undefined;
  readonly promptTokens: number;
  /** The block's first token (prompt tokens, then generated ones). */
  readonly firstToken: number;
  readonly loraName: string | undefined;
  readonly cacheSalt: string | undefined;
}

/** Hears what the prefix cache gains and loses, in the order it happens (the emulator's KV event publisher). */
export interface EngineCacheListener {
  stored(block: CachedBlock): void;
  evicted(hash: BlockHash): void;
  /** The prefix cache was emptied (resetPrefixCache). */
  cleared(): void;
}

export interface EngineModelOptions {
  /** Seed mixed into prompt block hashes (like vLLM's cache salt); default none. */
  readonly hashSeed?: string;
  /** Advance decode-only stretches in one go (default true). Off = strictly step by step (the reference). */
  readonly fastForward?: boolean;
  /** Emit a `token` event per generated token (default false). Turns the fast path off. */
  readonly tokenEvents?: boolean;
  /** Called after every step, in order. Costs a call per step: leave unset in simulations. */
  readonly onStep?: (step: StepRecord) => void;
  /** Multiplies every step's duration by a seeded lognormal factor (see step-jitter.ts); default none. */
  readonly stepJitter?: StepJitter;
  /** Hears every block the prefix cache stores and evicts; default none (simulations leave it unset). */
  readonly cacheListener?: EngineCacheListener;
}

/** Counters and gauges, the numbers vLLM exports on /metrics. Token counters are cumulative. */
export interface EngineStats {
  /** End of the last executed step (virtual ms). */
  readonly clockMs: number;
  readonly running: number;
  readonly waiting: number;
  readonly usedBlocks: number;
  readonly capacityBlocks: number;
  /** usedBlocks / capacityBlocks (vLLM's kv_cache_usage_perc: cached but unreferenced blocks count as free). */
  readonly kvUsage: number;
  /** Blocks holding a reusable hash (referenced or not). */
  readonly cachedBlocks: number;
  readonly evictedBlocks: number;
  /** Σ tokens looked up at first admissions (vLLM prefix_cache_queries; re-admissions after preemption excluded). */
  readonly prefixCacheQueryTokens: number;
  /** Σ tokens served from cache at first admissions (vLLM prefix_cache_hits). */
  readonly prefixCacheHitTokens: number;
  /** Σ tokens looked up when preempted requests were admitted again (vLLM's PrefixCacheStats.preempted_queries). */
  readonly preemptedPrefixCacheQueryTokens: number;
  /** Σ tokens served from cache at those re-admissions (vLLM's preempted_hits). */
  readonly preemptedPrefixCacheHitTokens: number;
  /** Σ prompt tokens of requests that produced their first token (vLLM prompt_tokens). */
  readonly promptTokens: number;
  readonly generationTokens: number;
  readonly preemptions: number;
  readonly submitted: number;
  readonly finished: number;
  readonly aborted: number;
  readonly steps: number;
  /** Steps advanced by the decode fast path (a subset of `steps`). */
  readonly fastForwardedSteps: number;
  /** Σ over steps of the sequences scheduled in it (÷ steps = mean batch). */
  readonly scheduledSequenceSteps: number;
  /** Virtual time spent executing steps. */
  readonly busyMs: number;
  /** Prompt (and recompute) tokens not yet computed, over running and waiting requests, before cache hits. */
  readonly pendingPrefillTokens: number;
}

const WAITING = 0;
const RUNNING = 1;
const DONE = 2;

/** Engine-side state of one request. */
class Sequence {
  state = WAITING;
  /** Tokens whose KV is computed and held in `blocks`. */
  computed = 0;
  /** Output tokens generated so far. */
  output = 0;
  cachedTokens = -1;
  firstTokenMs = -1;
  admissions = 0;
  preemptions = 0;
  /** Block ids holding this sequence's KV, in token order. */
  readonly blocks: number[] = [];
  /** Leading blocks whose hash registration is settled. */
  registered = 0;
  /** Scratch: tokens scheduled for this sequence in the current step. */
  newTokens = 0;
  /** The seed its block hashes were chained from (the engine's, salted by the request's cache_salt). */
  hashSeed: string | undefined;
  /** vLLM's request priority (lower is sooner). */
  priority = 0;
  /** The LoRA adapter and cache_salt it was submitted with (read only to report cached blocks). */
  loraName: string | undefined;
  cacheSalt: string | undefined;
  /** Submit order (ties of equal submit times in the priority queue). */
  order = 0;

  constructor(
    readonly id: string,
    readonly promptTokens: number,
    readonly promptText: string | undefined,
    /** Chained hashes of the known full blocks of prompt (+ output once generated blocks are hashed). */
    public hashes: BlockHash[] | Float64Array,
    public ownsHashes: boolean,
    readonly maxTokens: number,
    readonly submittedMs: number,
    readonly eligibleMs: number,
  ) {}
}

function ceilDiv(a: number, b: number): number {
  return Math.floor((a + b - 1) / b);
}

/** A running sequence past its prompt: its one token left is the next output token, not prefill. */
function isDecoding(seq: Sequence): boolean {
  return seq.output > 0 && seq.promptTokens + seq.output - seq.computed === 1;
}

export class EngineModel {
  readonly profile: EngineProfile;
  private readonly pool: KvBlockPool;
  private readonly stepTime: StepTimeModel;
  private readonly blockTokens: number;
  private readonly blockChars: number;
  private readonly hashSeed: string | undefined;
  private readonly fastForward: boolean;
  private readonly jitter: StepJitter | undefined;
  private readonly tokenEvents: boolean;
  private readonly onStep: ((step: StepRecord) => void) | undefined;
  private readonly cacheListener: EngineCacheListener | undefined;

  private readonly running: Sequence[] = [];
  /** prefillTokensPerSecond of the profile, once queueAhead needs it. */
  private fullStepSpeed: number | undefined;
  private readonly waiting: WaitingQueue<Sequence>;
  private readonly priorityPolicy: boolean;
  /** vLLM's `long_prefill_token_threshold`: 0 = no cap. */
  private readonly longPrefillTokenThreshold: number;
  private readonly live = new Map<string, Sequence>();
  private readonly scheduled: Sequence[] = [];
  /** Fast-path scratch: [ρ] → running sequences whose first new block opens at step ρ of the stretch. */
  private readonly opensBlockAt: Int32Array;
  /** Admission scratch: ids of the cached blocks a waiting request matched. */
  private readonly hitIds: Int32Array;
  /**
   * Waiting head that failed to get KV in the last executed step. Cleared when blocks are released or new
   * blocks are cached; while set, decoding alone cannot make it admissible (it only consumes free blocks and
   * evicts cached ones), which is what lets the fast path skip admission attempts.
   */
  private blockedHead: Sequence | undefined;
  /**
   * Set by the last executed step when every running request was left decoding (one token to compute). Only
   * executed steps admit, prefill or preempt; aborts only remove. So while set, the batch is all-decode.
   */
  private allDecoding = false;
  /**
   * Durations of the steps of the decode stretch planned last (tryFastForward); those from `aheadNext` to
   * `aheadCount` are computed but not applied yet (RunOptions.lookahead). `aheadEndMs`: the stretch's end.
   */
  private aheadDurations = new Float64Array(64);
  private aheadCount = 0;
  private aheadNext = 0;
  private aheadEndMs = 0;

  private clock = 0;
  private lastSubmitMs = -Infinity;
  private queryTokens = 0;
  private hitTokens = 0;
  private preemptedQueryTokens = 0;
  private preemptedHitTokens = 0;
  private promptTokenCount = 0;
  private generationTokenCount = 0;
  private preemptionCount = 0;
  private submittedCount = 0;
  private finishedCount = 0;
  private abortedCount = 0;
  private stepCount = 0;
  private fastForwardedStepCount = 0;
  private sequenceSteps = 0;
  private busy = 0;

  constructor(profile: EngineProfile, options: EngineModelOptions = {}) {
    this.profile = profile;
    this.cacheListener = options.cacheListener;
    const listener = this.cacheListener;
    this.pool = new KvBlockPool(
      profile.kvCapacityBlocks,
      listener === undefined ? undefined : (hash) => listener.evicted(hash),
    );
    this.stepTime = new StepTimeModel(profile.stepTime);
    this.blockTokens = profile.blockTokens;
    this.blockChars = profile.blockTokens * CHARS_PER_TOKEN;
    this.hashSeed = options.hashSeed;
    this.tokenEvents = options.tokenEvents ?? false;
    this.fastForward = (options.fastForward ?? true) && !this.tokenEvents;
    this.onStep = options.onStep;
    this.jitter = options.stepJitter;
    this.opensBlockAt = new Int32Array(profile.blockTokens);
    this.hitIds = new Int32Array(Math.ceil(profile.maxModelLen / profile.blockTokens) + 1);
    this.priorityPolicy = profile.schedulingPolicy === 'priority';
    this.waiting = this.priorityPolicy ? new PriorityWaitingQueue<Sequence>() : new FcfsWaitingQueue<Sequence>();
    this.longPrefillTokenThreshold = profile.longPrefillTokenThreshold ?? 0;
  }

  /**
   * Queues a request that arrived at `nowMs` (non-decreasing across calls). It enters the waiting queue at
   * `nowMs + profile.requestOverheadMs` and joins the first step that starts at or after that.
   * Throws `EngineRequestError` for requests vLLM would reject with 400.
   */
  submit(input: EngineRequestInput, nowMs: number): SubmittedRequest {
    if (!Number.isFinite(nowMs)) throw new RangeError(`submit time must be finite, got ${nowMs}`);
    if (nowMs < this.lastSubmitMs)
      throw new RangeError(`submit times must not decrease: ${nowMs} after ${this.lastSubmitMs}`);
    if (typeof input.id !== 'string' || input.id === '')
      throw new EngineRequestError('invalid-request', 'request id must be a non-empty string');
    if (this.live.has(input.id))
      throw new EngineRequestError('duplicate-id', `request id "${input.id}" is already in the engine`);

    const { promptTokens, hashes, ownsHashes } = this.promptOf(input);
    if (promptTokens < 1)
      throw new EngineRequestError('empty-prompt', 'the prompt is empty; it must have at least one token');
    const { maxModelLen } = this.profile;
    const refusal = contextLimitRefusal(promptTokens, input.maxTokens, maxModelLen);
    if (refusal !== undefined) throw refusal;
    const requested = input.maxTokens ?? this.profile.defaultMaxTokens;
    if (!Number.isInteger(requested) || requested < 1) {
      throw new EngineRequestError(
        'invalid-max-tokens',
        `max_tokens must be an integer >= 1, got ${String(requested)}`,
      );
    }
    const maxTokens = Math.min(requested, maxModelLen - promptTokens);
    const priority = input.priority ?? 0;
    if (!Number.isSafeInteger(priority))
      throw new EngineRequestError('invalid-priority', `priority must be an integer, got ${String(priority)}`);

    // Steps planned ahead that start before the request arrives happen as planned; the rest may not.
    this.settleAhead(nowMs);
    this.lastSubmitMs = nowMs;
    const eligibleMs = nowMs + this.profile.requestOverheadMs;
    const seq = new Sequence(
      input.id,
      promptTokens,
      input.promptText,
      hashes,
      ownsHashes,
      maxTokens,
      nowMs,
      eligibleMs,
    );
    seq.hashSeed = this.hashSeedOf(input);
    seq.priority = priority;
    seq.loraName = input.loraName;
    seq.cacheSalt = input.cacheSalt;
    seq.order = this.submittedCount;
    this.live.set(seq.id, seq);
    this.waiting.pushBack(seq);
    this.submittedCount++;
    return { id: seq.id, promptTokens, maxTokens, eligibleMs };
  }

  /**
   * Executes every step that starts before `tMs` and returns their events in time order. The last step may
   * end after `tMs`: its events carry their own (later) times and are final.
   */
  runUntil(tMs: number, options: RunOptions = {}): EngineEvent[] {
    const events: EngineEvent[] = [];
    const stopAfterFinish = options.stopAfterFinish ?? false;
    const lookahead = options.lookahead ?? false;
    for (;;) {
      if (this.aheadNext < this.aheadCount) {
        // Steps of a stretch planned ahead: all of them when the step after it starts before tMs too.
        if (this.aheadEndMs < tMs) this.applyAhead(this.aheadCount - this.aheadNext);
        else {
          if (!lookahead) this.applyAheadBefore(tMs);
          break;
        }
      }
      const start = this.nextStepTimeMs();
      if (start === undefined || !(start < tMs)) break;
      if (this.fastForward && this.tryFastForward(start, tMs, lookahead)) continue;
      const finishedBefore = this.finishedCount;
      this.executeStep(start, events);
      if (stopAfterFinish && this.finishedCount !== finishedBefore) break;
    }
    return events;
  }

  /** Runs until nothing is running or waiting. */
  drain(): EngineEvent[] {
    return this.runUntil(Infinity);
  }

  /**
   * When the engine next needs a `runUntil`: the end of a decode stretch planned ahead (RunOptions.lookahead),
   * else the start of its next step; undefined when it has nothing to do.
   */
  nextRunTimeMs(): number | undefined {
    return this.aheadNext < this.aheadCount ? this.aheadEndMs : this.nextStepTimeMs();
  }

  /** Start time of the next step (applied or not), or undefined when the engine has nothing to do. */
  nextStepTimeMs(): number | undefined {
    if (this.running.length > 0) return this.clock;
    const head = this.waiting.peekFront();
    if (head === undefined) return undefined;
    return head.eligibleMs > this.clock ? head.eligibleMs : this.clock;
  }

  isIdle(): boolean {
    return this.running.length === 0 && this.waiting.length === 0;
  }

  /**
   * Tokens a request with this prompt would be served from the prefix cache if it were admitted now (a pure
   * read: no LRU touch). Same rules as admission: leading full blocks only, never the last token.
   */
  cachedTokensFor(prompt: PromptInput): number {
    const { promptTokens, hashes } = this.promptOf(prompt);
    if (promptTokens < 1) return 0;
    return this.pool.matchPrefix(hashes, Math.floor((promptTokens - 1) / this.blockTokens)) * this.blockTokens;
  }

  /**
   * Leading tokens of `prompt` that the requests the engine holds will have computed before a request sent now starts
   * (FCFS: those prefilling or waiting share its first blocks): what its cache will hold of it then, beyond what it
   * holds now (cachedTokensFor). Same rule: full blocks, never the prompt's last token.
   */
  pendingTokensFor(prompt: PromptInput): number {
    const { promptTokens, hashes } = this.promptOf(prompt);
    const limit = Math.min(hashes.length, Math.floor((promptTokens - 1) / this.blockTokens));
    let most = 0;
    const consider = (seq: Sequence): void => {
      const own = Math.min(limit, seq.hashes.length, Math.floor(seq.promptTokens / this.blockTokens));
      let n = 0;
      while (n < own && seq.hashes[n] === hashes[n]) n++;
      if (n > most) most = n;
    };
    for (const seq of this.running) if (!isDecoding(seq)) consider(seq);
    for (const seq of this.waiting) consider(seq);
    return most * this.blockTokens;
  }

  /** Whether the engine still holds this request (waiting or running). */
  has(id: string): boolean {
    return this.live.has(id);
  }

  /**
   * Drops a waiting or running request (client went away) and frees its blocks; computed full blocks stay
   * cached. Returns false if the engine does not hold it. No event is emitted.
   */
  abort(id: string): boolean {
    const seq = this.live.get(id);
    if (seq === undefined) return false;
    if (this.aheadNext < this.aheadCount)
      throw new Error('engine model: abort while a decode stretch is planned ahead (RunOptions.lookahead)');
    if (seq.state === WAITING) this.waiting.remove(seq);
    else this.running.splice(this.running.indexOf(seq), 1);
    this.releaseBlocks(seq);
    seq.state = DONE;
    this.live.delete(id);
    this.abortedCount++;
    return true;
  }

  /**
   * vLLM's `reset_prefix_cache`: forgets every cached block when no request is running or waiting (vLLM refuses
   * while blocks are in use and reports false); the listener hears `cleared`.
   */
  resetPrefixCache(): boolean {
    if (!this.isIdle() || !this.pool.resetPrefixCache()) return false;
    this.cacheListener?.cleared();
    return true;
  }

  /**
   * The engine process restarts at `nowMs` (a crash, a redeploy): every request it holds is dropped (their ids are
   * returned, in submission order), and its prefix cache starts empty (the listener hears `cleared`, as a new vLLM
   * process's first KV event batch says). Planned steps that start before `nowMs` happen first.
   */
  restart(nowMs: number): string[] {
    this.settleAhead(nowMs);
    const dropped = [...this.live.keys()];
    for (const id of dropped) this.abort(id);
    this.resetPrefixCache();
    return dropped;
  }

  /**
   * Applies the steps of a planned decode stretch (RunOptions.lookahead) that start before `nowMs`, as a send at
   * `nowMs` would: what they cache and evict is then heard by the listener (the simulator's KV events).
   */
  applyPlannedStepsBefore(nowMs: number): void {
    this.applyAheadBefore(nowMs);
  }

  /** End of the last executed step (virtual ms). */
  get clockMs(): number {
    return this.clock;
  }

  /**
   * Prefill tokens the engine will compute before a request submitted now starts its own (FCFS): what each running
   * request has left to prefill, and each waiting one's prompt (with output to recompute, if preempted) less what
   * the prefix cache holds of it now. Steps planned ahead that start before `nowMs` are applied first (as a send
   * at `nowMs` would), so the cache read is the one a request arriving then meets. A pure read otherwise.
   */
  prefillTokensAhead(nowMs: number): number {
    this.applyAheadBefore(nowMs);
    return this.runningPrefillTokens() + this.waitingUncachedTokens();
  }

  /** Each waiting request's prompt (with output to recompute, if preempted) less what the prefix cache holds of it now. */
  private waitingUncachedTokens(): number {
    let uncached = 0;
    const bt = this.blockTokens;
    for (const seq of this.waiting) {
      const tokens = seq.promptTokens + seq.output;
      uncached += tokens - this.pool.matchPrefix(seq.hashes, Math.floor((tokens - 1) / bt)) * bt;
    }
    return uncached;
  }

  /**
   * Engine steps until the KV cache has room for the waiting requests' and `promptUncached` more tokens' blocks, if
   * the running requests end as their max_tokens say (the engine model's outputs run to max_tokens): 0 when the free
   * blocks (cached ones no request holds included) suffice now. Blocks decodes add meanwhile are not counted.
   */
  private stepsUntilKvRoom(promptUncached: number): number {
    const bt = this.blockTokens;
    const deficit = ceilDiv(this.waitingUncachedTokens() + promptUncached, bt) - this.pool.freeBlocks;
    if (deficit <= 0) return 0;
    const ends = this.running
      .map((seq) => ({ steps: seq.promptTokens + seq.maxTokens - seq.computed, blocks: seq.blocks.length }))
      .sort((a, b) => a.steps - b.steps);
    let freed = 0;
    for (const end of ends) {
      freed += end.blocks;
      if (freed >= deficit) return end.steps;
    }
    return ends.length === 0 ? 0 : ends[ends.length - 1].steps;
  }

  /**
   * The queue a request submitted at `nowMs` meets (prefillTokensAhead, which applies the planned steps first), what
   * of `prompt` the requests in it will have computed (pendingTokensFor), the rest of the step in progress, the wait
   * for KV room, and the running batch: requests decoding (one token of every step each) and requests with prompt
   * left to compute (waiting, or running and prefilling: a prefill joining their step delays their first token).
   */
  queueAhead(nowMs: number, prompt: PromptInput): EngineQueue {
    const prefillTokensAhead = this.prefillTokensAhead(nowMs);
    const pendingPromptTokens = this.pendingTokensFor(prompt);
    const { promptTokens } = this.promptOf(prompt);
    const promptUncached = promptTokens - Math.max(this.cachedTokensFor(prompt), pendingPromptTokens);
    let decodeSequences = 0;
    for (const seq of this.running) if (isDecoding(seq)) decodeSequences++;
    const prefillingSequences = this.running.length - decodeSequences + this.waiting.length;
    // A step's tokens count as computed from its start: the time it has left is work ahead no queue shows.
    this.fullStepSpeed ??= prefillTokensPerSecond(this.profile);
    const stepInProgressTokens = (Math.max(0, this.clock - nowMs) * this.fullStepSpeed) / 1000;
    // Waiting for KV room: that many steps of the running batch as it is now.
    const kvSteps = this.stepsUntilKvRoom(promptUncached);
    let kvWaitTokens = 0;
    if (kvSteps > 0) {
      let context = 0;
      for (const seq of this.running) context += seq.computed + 1;
      const stepMs = this.stepTime.durationMs(this.running.length, context, 0);
      kvWaitTokens = (kvSteps * stepMs * this.fullStepSpeed) / 1000;
    }
    return {
      prefillTokensAhead,
      pendingPromptTokens,
      stepInProgressTokens,
      kvWaitTokens,
      decodeSequences,
      prefillingSequences,
      stepTokens: this.profile.maxNumBatchedTokens,
    };
  }

  /** Tokens running requests have left to compute before decoding (a decoding request's next token is not prefill). */
  private runningPrefillTokens(): number {
    let pending = 0;
    for (const seq of this.running) {
      if (!isDecoding(seq)) pending += seq.promptTokens + seq.output - seq.computed;
    }
    return pending;
  }

  stats(): EngineStats {
    let pending = this.runningPrefillTokens();
    for (const seq of this.waiting) pending += seq.promptTokens + seq.output;
    return {
      clockMs: this.clock,
      running: this.running.length,
      waiting: this.waiting.length,
      usedBlocks: this.pool.usedBlocks,
      capacityBlocks: this.pool.capacity,
      kvUsage: this.pool.usedBlocks / this.pool.capacity,
      cachedBlocks: this.pool.cachedBlocks,
      evictedBlocks: this.pool.evictions,
      prefixCacheQueryTokens: this.queryTokens,
      prefixCacheHitTokens: this.hitTokens,
      preemptedPrefixCacheQueryTokens: this.preemptedQueryTokens,
      preemptedPrefixCacheHitTokens: this.preemptedHitTokens,
      promptTokens: this.promptTokenCount,
      generationTokens: this.generationTokenCount,
      preemptions: this.preemptionCount,
      submitted: this.submittedCount,
      finished: this.finishedCount,
      aborted: this.abortedCount,
      steps: this.stepCount,
      fastForwardedSteps: this.fastForwardedStepCount,
      scheduledSequenceSteps: this.sequenceSteps,
      busyMs: this.busy,
      pendingPrefillTokens: pending,
    };
  }

  /** Throws if block accounting is inconsistent (tests call this after every operation). */
  checkInvariants(): void {
    const refs = new Int32Array(this.pool.capacity);
    for (const seq of this.running) {
      if (seq.blocks.length !== ceilDiv(seq.computed, this.blockTokens)) {
        throw new Error(`request ${seq.id} holds ${seq.blocks.length} blocks for ${seq.computed} computed tokens`);
      }
      for (const id of seq.blocks) refs[id]++;
    }
    for (const seq of this.waiting)
      if (seq.blocks.length !== 0) throw new Error(`waiting request ${seq.id} holds blocks`);
    this.pool.checkInvariants(refs);
    if (this.running.length > this.profile.maxNumSeqs) throw new Error(`${this.running.length} running > maxNumSeqs`);
  }

  private promptOf(input: PromptInput): {
    promptTokens: number;
    hashes: BlockHash[] | Float64Array;
    ownsHashes: boolean;
  } {
    const text = input.promptText;
    if (text !== undefined && typeof text !== 'string')
      throw new EngineRequestError('invalid-request', 'promptText must be a string');
    let promptTokens = input.promptTokens;
    if (promptTokens === undefined) {
      if (text === undefined)
        throw new EngineRequestError('invalid-request', 'give promptText, or promptTokens with blockHashes');
      promptTokens = tokenCount(text);
    } else if (!Number.isInteger(promptTokens) || promptTokens < 0) {
      throw new EngineRequestError(
        'invalid-request',
        `promptTokens must be a non-negative integer, got ${String(promptTokens)}`,
      );
    } else if (text !== undefined && promptTokens !== tokenCount(text)) {
      throw new EngineRequestError(
        'invalid-request',
        `promptTokens (${promptTokens}) != tokenCount(promptText) (${tokenCount(text)})`,
      );
    }
    if (input.blockHashes !== undefined) {
      const maxBlocks = Math.floor(promptTokens / this.blockTokens);
      const expected = text === undefined ? undefined : Math.floor(text.length / this.blockChars);
      if (input.blockHashes.length > maxBlocks || (expected !== undefined && input.blockHashes.length !== expected)) {
        throw new EngineRequestError(
          'invalid-request',
          `blockHashes has ${input.blockHashes.length} entries; a ${promptTokens}-token prompt has ${expected ?? `at most ${maxBlocks}`} full blocks of ${this.blockTokens} tokens`,
        );
      }
      // Shared with the caller until generated-block hashes are appended (copy on write, never mutated).
      const given = input.blockHashes;
      return {
        promptTokens,
        hashes: Array.isArray(given) || given instanceof Float64Array ? given : Array.from(given),
        ownsHashes: false,
      };
    }
    if (text === undefined)
      throw new EngineRequestError('invalid-request', 'promptTokens without promptText needs blockHashes');
    return {
      promptTokens,
      hashes: blockHashes(text, { blockTokens: this.blockTokens, seed: this.hashSeedOf(input) }),
      ownsHashes: true,
    };
  }

  /** The seed a prompt's blocks are hashed from: the engine's, with the request's cache_salt (vLLM's rule) mixed in. */
  private hashSeedOf(input: PromptInput): string | undefined {
    const salted =
      input.cacheSalt === undefined ? this.hashSeed : `${this.hashSeed ?? ''}\u0000cache_salt:${input.cacheSalt}`;
    return input.loraName === undefined ? salted : `${salted ?? ''}\u0000lora:${input.loraName}`;
  }

  /** One step: schedule, time it, apply it. */
  // eslint-disable-next-line max-lines-per-function -- the engine step is the simulator's hot loop: one function keeps its state in locals (issue 36)
  private executeStep(start: number, events: EngineEvent[]): void {
    const bt = this.blockTokens;
    const scheduled = this.scheduled;
    scheduled.length = 0;
    let budget = this.profile.maxNumBatchedTokens;
    let preempted = false;
    // Valid only until something could make the head admissible again (see tryFastForward).
    this.blockedHead = undefined;

    // 1. Running requests, oldest admission first.
    for (let i = 0; i < this.running.length && budget > 0; i++) {
      const seq = this.running[i];
      const n = Math.min(this.chunkTokens(seq.promptTokens + seq.output - seq.computed), budget);
      const needBlocks = ceilDiv(seq.computed + n, bt) - seq.blocks.length;
      let selfPreempted = false;
      while (needBlocks > this.pool.freeBlocks) {
        const victimIndex = this.preemptionVictimIndex();
        const victim = this.running[victimIndex];
        this.running.splice(victimIndex, 1);
        if (victimIndex < i) {
          // Priority only: a victim scheduled earlier in this step gives its tokens back (vLLM: token_budget +=
          // num_scheduled_tokens.pop(...); req_index -= 1).
          budget += victim.newTokens;
          victim.newTokens = 0;
          scheduled.splice(scheduled.indexOf(victim), 1);
          i--;
        }
        this.preempt(victim, start, events);
        preempted = true;
        if (victim === seq) {
          selfPreempted = true;
          break;
        }
      }
      if (selfPreempted) break;
      for (let b = 0; b < needBlocks; b++) seq.blocks.push(this.pool.allocate());
      seq.newTokens = n;
      scheduled.push(seq);
      budget -= n;
    }

    // 2. Waiting requests in the queue's order (arrival, or (priority, arrival)), unless this step had to preempt.
    if (!preempted) {
      this.waiting.promote(start);
      while (budget > 0 && this.running.length < this.profile.maxNumSeqs) {
        const seq = this.waiting.peekFront();
        if (seq === undefined || seq.eligibleMs > start) break;
        const target = seq.promptTokens + seq.output;
        // Whole blocks only, and never the last token: its logits must be computed.
        const hitIds = this.hitIds;
        const matched = this.pool.matchPrefix(seq.hashes, Math.floor((target - 1) / bt), hitIds);
        const hit = matched * bt;
        const n = Math.min(this.chunkTokens(target - hit), budget);
        const newBlocks = ceilDiv(hit + n, bt) - matched;
        if (newBlocks > this.pool.freeBlocks - this.pool.unreferencedAmong(hitIds, matched)) {
          this.blockedHead = seq;
          break;
        }
        this.waiting.popFront();
        for (let b = 0; b < matched; b++) seq.blocks.push(this.pool.acquire(hitIds[b]));
        if (newBlocks >= READ_AHEAD_MIN_BLOCKS) this.pool.readAheadEvictions(newBlocks);
        for (let b = 0; b < newBlocks; b++) seq.blocks.push(this.pool.allocate());
        seq.computed = hit;
        seq.registered = matched;
        seq.state = RUNNING;
        seq.admissions++;
        // As vLLM's KV cache manager does: a re-admission after preemption is counted apart, so recomputing
        // one's own evicted blocks under KV pressure does not inflate the prefix-cache hit rate.
        if (seq.admissions > 1) {
          this.preemptedQueryTokens += target;
          this.preemptedHitTokens += hit;
        } else {
          this.queryTokens += target;
          this.hitTokens += hit;
        }
        if (seq.cachedTokens < 0) seq.cachedTokens = hit;
        events.push({
          type: 'admitted',
          id: seq.id,
          timeMs: start,
          promptTokens: seq.promptTokens,
          cachedTokens: hit,
          resumed: seq.admissions > 1,
        });
        this.running.push(seq);
        seq.newTokens = n;
        scheduled.push(seq);
        budget -= n;
      }
    }

    if (scheduled.length === 0) {
      // Only reachable when every running request was just preempted: they are waiting now, admit next step.
      if (!preempted) throw new Error('engine model: step scheduled nothing without preempting (scheduler bug)');
      this.allDecoding = false;
      return;
    }

    // 3. Time the step. Per row: attention pairs new·(cached + new/2); decode rows add their context.
    let scheduledTokens = 0;
    let decodeContext = 0;
    let attentionPairs = 0;
    let decodeRows = 0;
    for (let i = 0; i < scheduled.length; i++) {
      const seq = scheduled[i];
      const n = seq.newTokens;
      scheduledTokens += n;
      attentionPairs += n * (seq.computed + n / 2);
      if (seq.output > 0 && n === 1 && seq.promptTokens + seq.output - seq.computed === 1) {
        decodeContext += seq.computed + 1;
        decodeRows++;
      }
    }
    const modelled = this.stepTime.durationMs(scheduledTokens, decodeContext, attentionPairs);
    const duration = this.jitter ? this.jitter.apply(modelled) : modelled;
    const end = start + duration;

    // 4. Apply: tokens computed, blocks completed, tokens produced, requests finished.
    const runningInStep = this.running.length;
    for (let i = 0; i < scheduled.length; i++) {
      const seq = scheduled[i];
      seq.computed += seq.newTokens;
      seq.newTokens = 0;
      if (seq.registered < seq.hashes.length) this.registerFullBlocks(seq);
      if (seq.computed !== seq.promptTokens + seq.output) continue;
      seq.output++;
      this.generationTokenCount++;
      if (seq.output === 1) {
        seq.firstTokenMs = end;
        this.promptTokenCount += seq.promptTokens;
        events.push({ type: 'first-token', id: seq.id, timeMs: end, ttftMs: end - seq.submittedMs });
      }
      if (this.tokenEvents) events.push({ type: 'token', id: seq.id, timeMs: end, outputTokens: seq.output });
      if (seq.output === seq.maxTokens) {
        this.finish(seq, end, events);
      }
    }
    let kept = 0;
    let allDecoding = true;
    for (let i = 0; i < this.running.length; i++) {
      const seq = this.running[i];
      if (seq.state !== RUNNING) continue;
      this.running[kept++] = seq;
      if (seq.output === 0 || seq.promptTokens + seq.output - seq.computed !== 1) allDecoding = false;
    }
    this.running.length = kept;
    this.allDecoding = allDecoding;

    this.clock = end;
    this.stepCount++;
    this.sequenceSteps += scheduled.length;
    this.busy += duration;
    if (this.onStep) {
      this.onStep({
        startMs: start,
        durationMs: duration,
        scheduledTokens,
        scheduledSequences: scheduled.length,
        decodeSequences: decodeRows,
        runningSequences: runningInStep,
        usedBlocks: this.pool.usedBlocks,
        fastForwarded: false,
      });
    }
    scheduled.length = 0;
  }

  /**
   * Advances k ≥ 1 steps at once when they are all alike: every running request decodes one token, none
   * finishes, none needs a block the pool cannot give, and no waiting request could be admitted (none
   * eligible yet, or the head is blocked by sequence slots, budget or KV — which decoding cannot relieve).
   * With `lookahead` the stretch is only planned (its steps run past `tMs`, up to LOOKAHEAD_MAX_STEPS) and
   * applied later (applyAhead). Returns false when not applicable; the caller then executes a normal step.
   */
  private tryFastForward(start: number, tMs: number, lookahead: boolean): boolean {
    const running = this.running;
    const batch = running.length;
    if (!this.allDecoding || batch === 0 || batch > this.profile.maxNumBatchedTokens) return false;

    let horizon = lookahead ? Infinity : tMs;
    // Under priority a request becoming eligible may take the blocked head's place: the stretch ends there.
    const promotionMs = this.waiting.nextPromotionMs();
    if (promotionMs !== undefined && promotionMs < horizon) horizon = Math.max(promotionMs, start);
    const head = this.waiting.peekFront();
    if (head !== undefined) {
      if (head.eligibleMs > start) {
        if (head.eligibleMs < horizon) horizon = head.eligibleMs;
      } else if (!(
        batch >= this.profile.maxNumSeqs ||
        batch >= this.profile.maxNumBatchedTokens ||
        head === this.blockedHead
      )) {
        return false;
      }
    }

    // Same sums, in the same order, as executeStep computes for an all-decode step, so times are identical.
    const bt = this.blockTokens;
    const opensBlockAt = this.opensBlockAt;
    opensBlockAt.fill(0);
    let kMax = Infinity;
    let decodeContext = 0;
    let attentionPairs = 0;
    for (let i = 0; i < batch; i++) {
      const seq = running[i];
      const untilLast = seq.maxTokens - seq.output - 1;
      if (untilLast < kMax) kMax = untilLast;
      decodeContext += seq.computed + 1;
      attentionPairs += 1 * (seq.computed + 1 / 2);
      // Step j computes position computed + j; it opens a block when that position is a multiple of bt.
      opensBlockAt[(bt - (seq.computed % bt)) % bt]++;
    }
    if (kMax < 1) return false;
    kMax = this.limitByFreeBlocks(kMax);
    if (kMax < 1) return false;
    if (lookahead && kMax > LOOKAHEAD_MAX_STEPS) kMax = LOOKAHEAD_MAX_STEPS;

    // Draws for steps that a new request may make void are journaled, to be given back (settleAhead).
    if (lookahead) this.jitter?.journal();
    let end = start;
    let k = 0;
    while (k < kMax && end < horizon) {
      const stepStart = end;
      const modelled = this.stepTime.durationMs(batch, decodeContext + batch * k, attentionPairs + batch * k);
      const duration = this.jitter ? this.jitter.apply(modelled) : modelled;
      end = stepStart + duration;
      if (k === this.aheadDurations.length) {
        const grown = new Float64Array(2 * k);
        grown.set(this.aheadDurations);
        this.aheadDurations = grown;
      }
      this.aheadDurations[k] = duration;
      k++;
    }
    if (k === 0) {
      if (lookahead) this.jitter?.unread(0);
      return false;
    }
    this.aheadCount = k;
    this.aheadNext = 0;
    this.aheadEndMs = end;
    if (!lookahead) this.applyAhead(k);
    return true;
  }

  /**
   * Applies the next `count` steps of the planned stretch: per step, as executeStep would (busy time added
   * step by step so the float sums agree bit for bit), then tokens and blocks for all of them at once.
   */
  private applyAhead(count: number): void {
    const running = this.running;
    const batch = running.length;
    const bt = this.blockTokens;
    const durations = this.aheadDurations;
    const first = this.aheadNext;
    let usedBlocks = this.pool.usedBlocks;
    let clock = this.clock;
    for (let k = first; k < first + count; k++) {
      const stepStart = clock;
      const duration = durations[k];
      clock = stepStart + duration;
      this.busy += duration;
      if (this.onStep) {
        usedBlocks += this.opensBlockAt[k % bt];
        this.onStep({
          startMs: stepStart,
          durationMs: duration,
          scheduledTokens: batch,
          scheduledSequences: batch,
          decodeSequences: batch,
          runningSequences: batch,
          usedBlocks,
          fastForwarded: true,
        });
      }
    }
    for (let i = 0; i < batch; i++) {
      const seq = running[i];
      seq.computed += count;
      seq.output += count;
      const need = ceilDiv(seq.computed, bt) - seq.blocks.length;
      for (let b = 0; b < need; b++) seq.blocks.push(this.pool.allocate());
    }
    this.generationTokenCount += batch * count;
    this.stepCount += count;
    this.fastForwardedStepCount += count;
    this.sequenceSteps += batch * count;
    this.clock = clock;
    this.aheadNext += count;
    if (this.aheadNext === this.aheadCount) this.endStretch();
  }

  /** Applies the planned steps that start before `tMs`; the rest stay planned. */
  private applyAheadBefore(tMs: number): void {
    let count = 0;
    let clock = this.clock;
    // The same float sums as applyAhead, so a step's start is the one it gets there.
    while (this.aheadNext + count < this.aheadCount && clock < tMs)
      clock += this.aheadDurations[this.aheadNext + count++];
    if (count > 0) this.applyAhead(count);
  }

  /** A request arrives at `tMs`: planned steps before it are applied, the others dropped (their draws given back). */
  private settleAhead(tMs: number): void {
    if (this.aheadNext === this.aheadCount) return;
    this.applyAheadBefore(tMs);
    if (this.aheadNext < this.aheadCount) this.endStretch();
  }

  /** Forgets the planned stretch; the jitter draws of its unapplied steps are given back (none once all applied). */
  private endStretch(): void {
    this.jitter?.unread(this.aheadCount - this.aheadNext);
    this.aheadNext = 0;
    this.aheadCount = 0;
  }

  /** New blocks the batch needs for k more decode steps: sequences first opening a block at step ρ open one every bt steps. */
  private blocksNeededFor(k: number): number {
    const bt = this.blockTokens;
    let need = 0;
    for (let first = 0; first < bt && first < k; first++) need += this.opensBlockAt[first] * ceilDiv(k - first, bt);
    return need;
  }

  /** Largest k ≤ kMax whose decode allocations fit in the free blocks (binary search; need is monotone in k). */
  private limitByFreeBlocks(kMax: number): number {
    const free = this.pool.freeBlocks;
    if (this.blocksNeededFor(kMax) <= free) return kMax;
    let lo = 0;
    let hi = kMax;
    while (lo < hi) {
      const mid = Math.floor((lo + hi + 1) / 2);
      if (this.blocksNeededFor(mid) <= free) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * Tokens a request may compute this step before the budget: vLLM caps a request's new tokens at
   * `long_prefill_token_threshold` when it is set and smaller (`if 0 < threshold < num_new_tokens`), for running
   * and waiting requests alike.
   */
  private chunkTokens(remaining: number): number {
    const threshold = this.longPrefillTokenThreshold;
    return threshold > 0 && threshold < remaining ? threshold : remaining;
  }

  /**
   * Which running request vLLM preempts when KV slots run out: FCFS `self.running.pop()` (the most recently
   * admitted); priority `max(self.running, key=lambda r: (r.priority, r.arrival_time))` (the least urgent, latest
   * arrival; an exact tie goes to the first in running order, as Python's max keeps the first).
   */
  private preemptionVictimIndex(): number {
    const running = this.running;
    if (!this.priorityPolicy) return running.length - 1;
    let victim = 0;
    for (let i = 1; i < running.length; i++) {
      const a = running[i];
      const b = running[victim];
      if (a.priority > b.priority || (a.priority === b.priority && a.submittedMs > b.submittedMs)) victim = i;
    }
    return victim;
  }

  private finish(seq: Sequence, timeMs: number, events: EngineEvent[]): void {
    this.releaseBlocks(seq);
    seq.state = DONE;
    this.live.delete(seq.id);
    this.finishedCount++;
    events.push({
      type: 'finished',
      id: seq.id,
      timeMs,
      promptTokens: seq.promptTokens,
      cachedTokens: seq.cachedTokens,
      outputTokens: seq.output,
      ttftMs: seq.firstTokenMs - seq.submittedMs,
      e2eMs: timeMs - seq.submittedMs,
      preemptions: seq.preemptions,
    });
  }

  /**
   * Preemption by recompute: free the KV (full blocks stay cached), requeue (FCFS: at the front; priority: by
   * (priority, arrival)), keep the output; on re-admission it recomputes prompt + output, partly from cache.
   */
  private preempt(seq: Sequence, timeMs: number, events: EngineEvent[]): void {
    this.releaseBlocks(seq);
    seq.computed = 0;
    seq.state = WAITING;
    seq.preemptions++;
    this.preemptionCount++;
    this.waiting.pushFront(seq);
    events.push({ type: 'preempted', id: seq.id, timeMs, outputTokens: seq.output });
  }

  /** Registers every completed block whose hash is known, hashing generated blocks first when the text is known. */
  private releaseBlocks(seq: Sequence): void {
    const fullBlocks = Math.floor(seq.computed / this.blockTokens);
    if (seq.promptText !== undefined && seq.hashes.length < fullBlocks) this.hashGeneratedBlocks(seq, fullBlocks);
    if (seq.registered < seq.hashes.length) this.registerFullBlocks(seq);
    this.pool.release(seq.blocks);
    seq.blocks.length = 0;
    seq.registered = 0;
    this.blockedHead = undefined;
  }

  /** Extends `seq.hashes` over the blocks of prompt + generated text, up to `fullBlocks`. */
  private hashGeneratedBlocks(seq: Sequence, fullBlocks: number): void {
    const prompt = seq.promptText as string;
    const known = seq.hashes.length;
    const offset = known * this.blockChars;
    let tail: string;
    if (offset <= prompt.length) {
      tail = prompt.slice(offset) + outputText(seq.output);
    } else {
      const firstToken = Math.floor((offset - prompt.length) / CHARS_PER_TOKEN);
      tail = outputText(seq.output, firstToken).slice(offset - prompt.length - firstToken * CHARS_PER_TOKEN);
    }
    const more = continueBlockHashes(tail, known > 0 ? seq.hashes[known - 1] : undefined, {
      blockTokens: this.blockTokens,
      seed: seq.hashSeed,
      maxBlocks: fullBlocks - known,
    });
    if (more.length === 0) return;
    if (!seq.ownsHashes || !Array.isArray(seq.hashes)) {
      seq.hashes = Array.from(seq.hashes);
      seq.ownsHashes = true;
    }
    const hashes = seq.hashes;
    for (const h of more) hashes.push(h);
  }

  /** Registers the hashes of blocks completed since the last call (prefix blocks other requests may reuse). */
  private registerFullBlocks(seq: Sequence): void {
    const upTo = Math.min(Math.floor(seq.computed / this.blockTokens), seq.hashes.length);
    if (upTo - seq.registered >= READ_AHEAD_MIN_BLOCKS)
      this.pool.readAheadRegistrations(seq.hashes, seq.registered, upTo);
    for (let b = seq.registered; b < upTo; b++) {
      // New cached content can raise the waiting head's hit, so its "blocked" verdict no longer holds.
      if (this.pool.register(seq.blocks[b], seq.hashes[b])) {
        this.blockedHead = undefined;
        this.cacheListener?.stored({
          hash: seq.hashes[b],
          parentHash: b > 0 ? seq.hashes[b - 1] : undefined,
          promptText: seq.promptText,
          promptTokens: seq.promptTokens,
          firstToken: b * this.blockTokens,
          loraName: seq.loraName,
          cacheSalt: seq.cacheSalt,
        });
      }
    }
    if (upTo > seq.registered) seq.registered = upTo;
  }
}
