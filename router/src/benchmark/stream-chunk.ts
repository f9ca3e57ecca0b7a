import { openAiErrorOf } from '../common/request-errors';

/**
 * What one streamed OpenAI-compatible event says, as far as measurement cares: did it carry generated output
 * (the first such event is the first token), usage, a terminal error, or the end marker.
 */
export interface StreamUsage {
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  /** `usage.prompt_tokens_details.cached_tokens`; undefined when the server does not report it. */
  readonly cachedTokens?: number;
}

export type StreamEventInfo =
  | { readonly kind: 'done' }
  | { readonly kind: 'chunk'; readonly generated: boolean; readonly usage?: StreamUsage }
  | { readonly kind: 'error'; readonly code: string; readonly message: string }
  | { readonly kind: 'invalid'; readonly message: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** True when a choice carries generated output: chat content, reasoning, tool calls, or completion text. */
function choiceGenerated(choice: unknown): boolean {
  if (!isObject(choice)) return false;
  if (nonEmptyString(choice.text)) return true;
  const delta = choice.delta;
  if (!isObject(delta)) return false;
  return (
    nonEmptyString(delta.content) ||
    nonEmptyString(delta.reasoning_content) ||
    nonEmptyString(delta.reasoning) ||
    (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)
  );
}

function usageOf(value: unknown): StreamUsage | undefined {
  if (!isObject(value)) return undefined;
  const details = isObject(value.prompt_tokens_details) ? value.prompt_tokens_details : undefined;
  return {
    promptTokens: count(value.prompt_tokens),
    completionTokens: count(value.completion_tokens),
    cachedTokens: details === undefined ? undefined : count(details.cached_tokens),
  };
}

const CARRIES_USAGE_OR_ERROR = /"usage"\s*:\s*\{|"error"|"object"\s*:\s*"error"|\[DONE\]/;
const NON_EMPTY_OUTPUT = /"(?:content|text|reasoning_content|reasoning)"\s*:\s*"[^"]|"tool_calls"\s*:\s*\[\s*\{/;

/**
 * Fast path for the bulk of a stream, once its first token is known: an event that carries no usage object,
 * no error and no end marker only counts as output (a vLLM stream has one such event per token, and parsing
 * each would cost the client time that delays reading other streams). Returns undefined when the event needs
 * the full read.
 */
export function readOrdinaryEvent(eventType: string, data: string): { generated: boolean } | undefined {
  if (eventType !== 'message' || CARRIES_USAGE_OR_ERROR.test(data)) return undefined;
  return { generated: NON_EMPTY_OUTPUT.test(data) };
}

/** Reads one SSE event of an OpenAI-compatible stream. An `event: error` event is an error whatever its data. */
export function readStreamEvent(eventType: string, data: string): StreamEventInfo {
  const trimmed = data.trim();
  if (trimmed === '[DONE]') return { kind: 'done' };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    if (eventType === 'error') return { kind: 'error', code: 'unknown', message: trimmed.slice(0, 200) };
    return { kind: 'invalid', message: `stream event is not JSON: ${trimmed.slice(0, 80)}` };
  }
  const error = openAiErrorOf(value);
  if (error !== undefined || eventType === 'error') {
    return { kind: 'error', code: error?.code ?? 'unknown', message: error?.message ?? '' };
  }
  if (!isObject(value)) return { kind: 'invalid', message: 'stream event is not a JSON object' };
  const choices = Array.isArray(value.choices) ? value.choices : [];
  return { kind: 'chunk', generated: choices.some(choiceGenerated), usage: usageOf(value.usage) };
}
