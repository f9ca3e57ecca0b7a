import { optionalBoolean, optionalString, type JsonObject } from './json-body';
import { RouterError } from './router-errors';
import type { EnginePrompt } from './routing-request';

export interface CompletionFields {
  readonly model: string;
  readonly routingText: string;
  readonly stream: boolean;
  readonly promptCacheKey?: string;
  /** vLLM's `cache_salt` (ChatFields.cacheSalt). */
  readonly cacheSalt?: string;
  readonly user?: string;
  /** The prompt as the engine tokenizes it, when it is one prompt (a batch is several). */
  readonly enginePrompt?: EnginePrompt;
}

const PROMPT_SHAPE =
  'prompt must be a string, an array of strings, an array of token ids, or an array of token id arrays';

/**
 * Validates and reads an OpenAI completions body. The routing text is the prompt; a batch of prompts is
 * concatenated in order (the batch goes to one instance); token-id prompts are rendered as the decimal ids
 * separated by spaces, a stable stand-in text for keying.
 */
export function readCompletionFields(body: JsonObject): CompletionFields {
  const prompt = body.prompt;
  if (prompt === undefined || prompt === null) throw new RouterError('missing_field', 'prompt is required');
  const routingText = promptText(prompt);
  const enginePrompt = enginePromptOf(prompt, optionalBoolean(body, 'add_special_tokens') ?? true);
  return {
    model: optionalString(body, 'model') ?? '',
    routingText,
    stream: optionalBoolean(body, 'stream') ?? false,
    promptCacheKey: optionalString(body, 'prompt_cache_key'),
    cacheSalt: optionalString(body, 'cache_salt'),
    user: optionalString(body, 'user'),
    ...(enginePrompt !== undefined ? { enginePrompt } : {}),
  };
}

/**
 * One prompt as vLLM tokenizes it (vllm/entrypoints/openai/protocol.py, CompletionRequest, vllm-project/vllm@0052bed3):
 * text with `add_special_tokens` (default true: the tokenizer adds BOS), token ids as they are. A prompt already
 * checked by promptText.
 */
function enginePromptOf(prompt: unknown, addSpecialTokens: boolean): EnginePrompt | undefined {
  const single: unknown = Array.isArray(prompt) && prompt.length === 1 && !isTokenId(prompt[0]) ? prompt[0] : prompt;
  if (typeof single === 'string') return { kind: 'text', text: single, addSpecialTokens };
  if (Array.isArray(single) && single.every(isTokenId)) return { kind: 'token-ids', ids: single };
  return undefined;
}

function promptText(prompt: unknown): string {
  if (typeof prompt === 'string') return prompt;
  if (!Array.isArray(prompt) || prompt.length === 0) throw new RouterError('invalid_field', PROMPT_SHAPE);
  if (prompt.every((p) => typeof p === 'string')) return prompt.join('');
  if (prompt.every(isTokenId)) return prompt.join(' ');
  if (prompt.every((p) => Array.isArray(p) && p.length > 0 && p.every(isTokenId))) {
    return (prompt as number[][]).map((tokens) => tokens.join(' ')).join(' ');
  }
  throw new RouterError('invalid_field', PROMPT_SHAPE);
}

function isTokenId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
