import { optionalBoolean, optionalString, type JsonObject } from './json-body';
import { RouterError } from './router-errors';

export interface CompletionFields {
  readonly model: string;
  readonly routingText: string;
  readonly stream: boolean;
  readonly promptCacheKey?: string;
  /** vLLM's `cache_salt` (ChatFields.cacheSalt). */
  readonly cacheSalt?: string;
  readonly user?: string;
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
  return {
    model: optionalString(body, 'model') ?? '',
    routingText: promptText(prompt),
    stream: optionalBoolean(body, 'stream') ?? false,
    promptCacheKey: optionalString(body, 'prompt_cache_key'),
    cacheSalt: optionalString(body, 'cache_salt'),
    user: optionalString(body, 'user'),
  };
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
