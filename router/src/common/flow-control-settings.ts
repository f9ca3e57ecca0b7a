/**
 * The settings of flow control by priority class (core/flow-control.ts holds the rule): here so that the router's
 * options (config/) can name their defaults and ranges without importing the routing core.
 */

export type FlowControlMode = 'on' | 'off';

export interface FlowControlSettings {
  readonly mode: FlowControlMode;
  /** Predicted prefill tokens queued on the chosen instance above which a lower-class request waits. */
  readonly queuedPrefillBoundTokens: number;
  /** Requests that may wait at the router, all classes together; one more is refused (429). */
  readonly maxWaiting: number;
  /** The Retry-After of that refusal, in seconds. */
  readonly retryAfterSeconds: number;
}

export const FLOW_CONTROL_DEFAULTS: FlowControlSettings = {
  mode: 'on',
  // Two full steps of vLLM's default 8,192-token budget: what an urgent request may find queued ahead of it.
  queuedPrefillBoundTokens: 16_384,
  maxWaiting: 100_000,
  retryAfterSeconds: 1,
};

export const FLOW_CONTROL_RANGES = {
  queuedPrefillBoundTokens: { min: 0, max: 100_000_000 },
  maxWaiting: { min: 0, max: 10_000_000 },
  retryAfterSeconds: { min: 1, max: 3600 },
} as const;
