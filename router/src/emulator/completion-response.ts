/** Response bodies and SSE chunks in the OpenAI shapes vLLM produces. */
import type { CompletionKind } from './completion-request';

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: { readonly cached_tokens: number };
}

export function usageOf(promptTokens: number, completionTokens: number, cachedTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  };
}

export interface ResponseMeta {
  readonly id: string;
  readonly created: number;
  readonly model: string;
}

/** The whole answer of a non-streaming request. Every emulated answer ends by length (max_tokens reached). */
export function completionBody(kind: CompletionKind, meta: ResponseMeta, text: string, usage: Usage): object {
  if (kind === 'chat') {
    return {
      id: meta.id,
      object: 'chat.completion',
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: 'length' }],
      usage,
    };
  }
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: 'length' }],
    usage,
  };
}

/**
 * One SSE event carrying a chunk. `text` is the delta; `role` opens a chat stream; `finishReason` closes the
 * choice. With include_usage every chunk has `usage: null` except the final usage-only chunk.
 */
export function chunkEvent(
  kind: CompletionKind,
  meta: ResponseMeta,
  delta: { readonly text?: string; readonly role?: 'assistant'; readonly finishReason?: 'length' },
  includeUsage: boolean,
): string {
  const finish = delta.finishReason ?? null;
  const choice =
    kind === 'chat'
      ? {
          index: 0,
          delta: {
            ...(delta.role ? { role: delta.role } : {}),
            ...(delta.text !== undefined ? { content: delta.text } : {}),
          },
          logprobs: null,
          finish_reason: finish,
        }
      : { index: 0, text: delta.text ?? '', logprobs: null, finish_reason: finish };
  const chunk = {
    id: meta.id,
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [choice],
    ...(includeUsage ? { usage: null } : {}),
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The usage-only chunk sent last when stream_options.include_usage is true. */
export function usageEvent(kind: CompletionKind, meta: ResponseMeta, usage: Usage): string {
  const chunk = {
    id: meta.id,
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [],
    usage,
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export const DONE_EVENT = 'data: [DONE]\n\n';
