/**
 * What a driver records about one request, live or simulated. Times are milliseconds on the driver's clock
 * (wall clock live, virtual clock simulated), relative to any fixed origin such as the run start.
 */
export interface RequestRecord {
  /** The workload request id. */
  readonly id: string;
  /** Instance the router sent it to; null when it failed before an instance was chosen. */
  readonly instance: string | null;
  /** When the request was sent (dispatched by the driver). */
  readonly sentAtMs: number;
  /** Time to first token: first streamed token − sentAtMs; null when no token arrived. */
  readonly ttftMs: number | null;
  /** End-to-end latency: response end (or failure) − sentAtMs. Also bounds the request's in-flight interval. */
  readonly e2eMs: number;
  /** Engine-reported `usage.prompt_tokens`; undefined when the response carried no usage. */
  readonly promptTokens?: number;
  /** Engine-reported `usage.prompt_tokens_details.cached_tokens`. */
  readonly cachedPromptTokens?: number;
  /** Engine-reported `usage.completion_tokens` (or tokens counted from the stream). */
  readonly outputTokens?: number;
  /** Router decision time in microseconds (policy decide + commit), when the router reports it. */
  readonly decisionMicros?: number;
  /** The router's reason for the decision (policy-specific, e.g. `prefix-affinity`), when known. */
  readonly reason?: string;
  /** Prompt tokens the policy predicted the instance would serve from cache, when the policy predicts. */
  readonly predictedCachedTokens?: number;
  /** Error code or short message; present exactly when the request failed. */
  readonly error?: string;
  /** The server's, client's or simulated engine's message for `error` (never request content), when it gave one. */
  readonly errorDetail?: string;
  /** The request's priority class (the workload's `priority`), when it had one: reports group TTFT by it. */
  readonly priority?: number;
}
