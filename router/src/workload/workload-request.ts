/**
 * One request of a workload, as both the simulator (virtual time) and the live benchmark (HTTP) consume it.
 * Workloads yield these lazily, in arrival order; a request holds its own text, nothing else does.
 */
export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
}

interface WorkloadRequestBase {
  /** 0-based position in the workload's order (arrival order). */
  readonly index: number;
  /** Unique within the workload, e.g. `lc-000042`. */
  readonly id: string;
  /**
   * Planned send time in milliseconds from the start of the run. Open loop: send at this time. Closed loop:
   * only the order matters (see LoadShape).
   */
  readonly arrivalMs: number;
  /** Tokens to generate (`max_tokens`); benchmarks generate exactly this many (see toOpenAiBody's ignoreEos). */
  readonly maxTokens: number;
  /** Conversation this request belongs to (short-chat), sent as the OpenAI `user` field. */
  readonly conversationId?: string;
  /** 0-based turn within the conversation. */
  readonly turn?: number;
  /**
   * The request that must COMPLETE before this one is sent: a conversation's turn k+1 depends on turn k. A
   * driver releases a request at max(arrivalMs, completion time of dependsOnId) in open loop, and in closed
   * loop skips it (keeping its place) until the dependency has completed.
   */
  readonly dependsOnId?: string;
  /**
   * vLLM's request `priority` (lower is sooner), sent in the body as `priority`; a trace line's `"priority"`.
   * Reports group TTFT by it; the router's flow control holds lower classes back under load.
   */
  readonly priority?: number;
  /** Tenant key, sent as `prompt_cache_key` (SageMaker mixes it into the PREFIX_AWARE key). */
  readonly tenantKey?: string;
  /** Prefix group the request was drawn from (long-context, shared-system); for diagnostics only. */
  readonly group?: number;
  /**
   * A promise that the request starts like every other request with the same key, so a consumer may reuse
   * work done on that start (the simulator reuses its block hashes instead of hashing it again).
   */
  readonly sharedHead?: SharedHead;
}

/**
 * The start of a request that other requests repeat exactly: for chat, the first `length` messages; for
 * completions, the first `length` characters of the prompt. Requests with the same `key` must have the same
 * start, character for character; a workload that cannot promise that sets no key.
 */
export interface SharedHead {
  readonly key: string;
  readonly length: number;
}

export interface ChatWorkloadRequest extends WorkloadRequestBase {
  readonly kind: 'chat';
  readonly messages: readonly ChatMessage[];
}

export interface CompletionWorkloadRequest extends WorkloadRequestBase {
  readonly kind: 'completion';
  readonly prompt: string;
}

export type WorkloadRequest = ChatWorkloadRequest | CompletionWorkloadRequest;

/** Which API a synthetic workload sends its prompts through. */
export type WorkloadApi = 'chat' | 'completion';

/** The OpenAI-compatible path a request goes to. */
export function openAiPath(request: WorkloadRequest): '/v1/chat/completions' | '/v1/completions' {
  return request.kind === 'chat' ? '/v1/chat/completions' : '/v1/completions';
}

export interface OpenAiBodyOptions {
  /** Model name put in the body. */
  readonly model: string;
  /** Stream the response (SSE); the benchmark needs it to measure TTFT. Default true. */
  readonly stream?: boolean;
  /** Ask for a final usage chunk when streaming (`stream_options.include_usage`). Default true. */
  readonly includeUsage?: boolean;
  /**
   * vLLM's `ignore_eos`: generate exactly `max_tokens` so every strategy does the same work. Default true;
   * set false for servers that reject unknown fields.
   */
  readonly ignoreEos?: boolean;
}

/** The JSON body of the OpenAI-compatible request (`/v1/chat/completions` or `/v1/completions`). */
export function toOpenAiBody(request: WorkloadRequest, options: OpenAiBodyOptions): Record<string, unknown> {
  const stream = options.stream ?? true;
  const body: Record<string, unknown> = { model: options.model };
  if (request.kind === 'chat') {
    body.messages = request.messages.map((m) => ({ role: m.role, content: m.content }));
  } else {
    body.prompt = request.prompt;
  }
  body.max_tokens = request.maxTokens;
  body.stream = stream;
  if (stream && (options.includeUsage ?? true)) body.stream_options = { include_usage: true };
  if (options.ignoreEos ?? true) body.ignore_eos = true;
  if (request.tenantKey !== undefined) body.prompt_cache_key = request.tenantKey;
  if (request.conversationId !== undefined) body.user = request.conversationId;
  if (request.priority !== undefined) body.priority = request.priority;
  return body;
}

/** Characters of prompt text a request carries (message contents or the prompt), before any chat template. */
export function contentChars(request: WorkloadRequest): number {
  if (request.kind === 'completion') return request.prompt.length;
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  return chars;
}
