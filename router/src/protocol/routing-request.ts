/**
 * What a policy sees of one request. The protocol layer builds it from HTTP; the simulator builds it from a
 * workload. Both go through the same policies, so this type is the contract between transport and policy.
 */
export type RequestApi = 'chat' | 'completions' | 'invocations';

/**
 * Which bytes SageMaker's PREFIX_AWARE strategy keys on:
 * - 'message-text': the OpenAI-compatible path keys on the first PrefixLength *characters* of the messages'
 *   text content, in order;
 * - 'body-bytes': InvokeEndpoint / InvokeEndpointWithResponseStream key on the first PrefixLength *bytes* of
 *   the raw request body.
 */
export type PrefixKeyBasis = 'message-text' | 'body-bytes';

/** One chat message as an engine's chat template reads it: its role and its text (a string, or the text parts in order). */
export interface EngineChatMessage {
  readonly role: string;
  readonly content: string | readonly string[];
}

/**
 * The prompt as the engine will build its token ids from it (kv-events/request-tokenizer.ts), when the router can
 * reproduce that: a chat to render with the model's chat template, a completion text, or token ids used as they are.
 * Absent when it cannot: images or other non-text parts, tools, documents, a request's own chat template or template
 * arguments, a final message to continue, a batch of prompts; the router then keeps its estimate.
 */
export type EnginePrompt =
  | {
      readonly kind: 'chat';
      readonly messages: readonly EngineChatMessage[];
      /** vLLM's `add_generation_prompt` (default true). */
      readonly addGenerationPrompt: boolean;
      /** vLLM's `add_special_tokens` for chat (default false: the template adds its own BOS). */
      readonly addSpecialTokens: boolean;
    }
  | {
      readonly kind: 'text';
      readonly text: string;
      /** vLLM's `add_special_tokens` for completions (default true: the tokenizer adds BOS). */
      readonly addSpecialTokens: boolean;
    }
  | { readonly kind: 'token-ids'; readonly ids: readonly number[] };

export interface RoutingRequest {
  /** Model name from the body, or '' when the body names none. */
  readonly model: string;
  readonly api: RequestApi;
  readonly keyBasis: PrefixKeyBasis;
  /** The prompt text in order: chat = message text content concatenated; completions = the prompt. */
  readonly routingText: string;
  /** The raw request body; present when keyBasis is 'body-bytes'. */
  readonly rawBody?: Uint8Array;
  /** X-Amzn-SageMaker-Prefix-Aware-Id header or OpenAI `prompt_cache_key`: mixed into the routing key. */
  readonly tenantKey?: string;
  /**
   * Who may share cached prefixes with whom (cacheScopeOf): set when the request carries vLLM's `cache_salt` or
   * was authenticated by an API key. Mixed into every routing hash (policy/cache-scope.ts), so requests of
   * different scopes never appear to share a prefix.
   */
  readonly cacheScope?: string;
  /** Optional conversation/session id (e.g. OpenAI `user`), for policies that want session stickiness. */
  readonly sessionKey?: string;
  /** The request's HTTP headers (lower-case names), for policies that read one (e.g. a session header). */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** Whether the client asked for a streamed response. */
  readonly stream: boolean;
  /** The prompt as the engine tokenizes it, when the router can reproduce that (EnginePrompt). */
  readonly enginePrompt?: EnginePrompt;
}
