/**
 * An engine's queue and running batch by its own state, as a request sent now meets them: what a policy reads
 * (EngineState.queue) and the simulator's engine model computes (EngineModel.queueAhead), one shape for both.
 */
export interface EngineQueue {
  /**
   * Prefill tokens the engine will compute before this request's own: what running requests have left to prefill,
   * and each waiting request's prompt less what the engine's cache holds of it now.
   */
  readonly prefillTokensAhead: number;
  /**
   * Leading prompt tokens of the request being decided that requests already on the engine (prefilling or waiting)
   * will have computed before it starts: its cache will hold them then though it does not now (cachedPromptTokens).
   */
  readonly pendingPromptTokens: number;
  /**
   * The time the step the engine is executing has left, in prefill tokens at the engine's speed: an engine computes a
   * step's tokens as it starts it, so a prefill in progress has left the queue but not the engine's time.
   */
  readonly stepInProgressTokens: number;
  /**
   * The time until the engine's KV cache has room for the waiting requests and this one, if its running requests end
   * as their max_tokens say, in the same prefill tokens (0 when it has room now): a queue blocked on KV is not prefill.
   */
  readonly kvWaitTokens: number;
  /** Running requests past their prompt: each takes one token of every engine step. */
  readonly decodeSequences: number;
  /** Requests with prompt left to compute (waiting, or running and prefilling): a new prefill joining their step delays them. */
  readonly prefillingSequences: number;
  /** Tokens one engine step schedules (the engine's max_num_batched_tokens). */
  readonly stepTokens: number;
}
